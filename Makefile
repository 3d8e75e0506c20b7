# Two commands set everything up on a fresh machine: `make serve` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
NODE_BIN := node_modules/.bin
export LEADERBOARD_CACHE_DIR ?= $(CURDIR)/.cache

.PHONY: install node-install browser redis serve test lint lint-template lint-docker typecheck pytest codegen schema-diff schema docs docs-build docs-reference wheel lambda-package bench bench-ranks bench-hot bench-season bench-cpu soak clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

# Node tooling for the contract checks, pinned in package-lock.json.
node-install: node_modules/.installed

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Debian's Chromium, which tests/test_browser.py drives through Playwright; installed only
# when missing (needs root).
browser:
	test -x /usr/bin/chromium || (apt-get update && apt-get install -y --no-install-recommends chromium)

# Debian's redis-server, which leaderboard.embedded_redis runs as a child process for the tests;
# installed only when missing (needs root).
redis:
	command -v redis-server >/dev/null || test -x /usr/bin/redis-server || (apt-get update && apt-get install -y --no-install-recommends redis-server)

serve: install
	$(BIN)/leaderboard serve

# ruff, and the import contracts of pyproject.toml (the layers leaderboard -> edge -> gql ->
# resolvers -> rankindex -> dynamo; each benchmark package sharing code only through
# bench.core, which imports none of them).
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# cfn-lint on the AWS deployment (deploy/template.yaml); tests/test_deploy_template.py checks
# the template against the code (the table, the task role's DynamoDB actions, the environment).
# Its standard input is /dev/null: cfn-lint reads a template from it when it is no terminal,
# and stops when there is none at all.
lint-template: install
	$(BIN)/cfn-lint deploy/template.yaml < /dev/null

# The Dockerfile, against hadolint's rules (pinned in the dev extras).
lint-docker: install
	$(BIN)/hadolint Dockerfile

typecheck: install
	$(BIN)/mypy

# Two processes share the tests (pytest-xdist), each with its own DynamoDB Local and Redis: a
# test process and its DynamoDB Local together keep about one core busy. The slowest tests are
# listed at the end.
PYTEST_WORKERS ?= 2
pytest: install node_modules/.installed browser redis
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist worksteal --durations=25

# TypeScript types for the frontend operations in examples/operations/: fails when an
# operation does not validate against schema.graphql or a scalar has no TypeScript mapping.
codegen: node_modules/.installed
	rm -rf examples/generated
	$(NODE_BIN)/graphql-codegen --config codegen.yml --errors-only
	$(NODE_BIN)/tsc --noEmit --strict --noUnusedLocals --isolatedModules --verbatimModuleSyntax \
	  --target es2022 --lib es2022 --module esnext --moduleResolution bundler examples/generated/*.ts

# Fails on a breaking change from the last released schema, schema/released.graphql; each
# release commit copies the schema.graphql it ships there.
schema-diff: node_modules/.installed
	$(NODE_BIN)/graphql-inspector diff schema/released.graphql schema.graphql

test: lint lint-template lint-docker typecheck codegen schema-diff docs-build pytest

schema: install
	$(BIN)/leaderboard export-schema > schema.graphql

# The documentation site (mkdocs.yml, docs/), with no network: `make docs` serves it at
# http://$(DOCS_ADDRESS), rebuilt on every change; `make docs-build` builds it into site/
# (git-ignored) and fails on any warning, a broken link or anchor included. Material for MkDocs
# prints a notice of its end of life at every build unless NO_MKDOCS_2_WARNING is set.
# `make docs-reference` writes the reference pages of docs/reference/ from the code
# (tests/test_docs_reference.py fails while a committed page differs).
DOCS_ADDRESS ?= 127.0.0.1:8001
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr $(DOCS_ADDRESS)

docs-build: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

docs-reference: install
	$(BIN)/python -m docsgen

# The service as a wheel in dist/ with GraphiQL's four files inside: fetched from npm, their
# sha512 checked against the pins, written into leaderboard/graphiql_assets/ (git-ignored).
wheel: install
	$(BIN)/python -m leaderboard.graphiql_bundle
	rm -rf build/lib
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir dist .

# The rank-index projector's Lambda package, dist/rankindex-lambda.zip: the handler, the
# modules it imports and their pinned dependencies for Lambda's Python 3.11 (x86_64; set
# LAMBDA_PLATFORM=manylinux2014_aarch64 for arm64), without boto3 (the runtime has it).
LAMBDA_PLATFORM ?= manylinux2014_x86_64
lambda-package: install
	$(BIN)/python -m shipping.lambda_package --platform $(LAMBDA_PLATFORM)

# The whole benchmark (about 30 minutes on two cores, not part of `make test`): access
# patterns at 1k, 10k and 100k entries, the mixed workload at 1-64 clients against
# `leaderboard serve` in its own process, the same workload at 8 and 32 clients as the raw
# calls the service makes (its floor) and against the service with 1 worker and one per core,
# response cache off and on (bench.fleet), the workload at 8 clients under attack by 4
# anonymous clients sending the costliest documents the limits admit, the request units and
# cost of each operation and of the mix with one board's write ceiling (bench.capacity), and
# the PNG charts; results in bench/results/.
bench: install redis
	$(BIN)/python -m bench

# Rank latency through GraphQL from the Redis rank index and from COUNT at 10k, 100k and 1M
# entries, and the stream's lag to the index (about ten minutes on two cores).
bench-ranks: install redis
	$(BIN)/python -m bench.rank_index

# Plays of distinct players on one board under DynamoDB's transaction-conflict rule (the fault
# proxy in front of DynamoDB Local, every transaction held 10 ms): 16 game-server clients on
# one board of 1 and of 8 partitions, beside the same load over 16 boards; a burst of first
# entries, then 30 s of steady state each (a few minutes). Results in bench/results/hot_board.*.
bench-hot: install
	$(BIN)/python -m bench.hot_board

# The close of a season (dynamo/closing.py) on a board of 10,000 and one of 100,000 entrants,
# each on a fresh DynamoDB Local: the time of each step, entrants a second, the request units
# consumed, and the bytes the final standings take to store beside the live board's items
# (several minutes, most of it loading the boards). Results in bench/results/season_close.*.
bench-season: install
	$(BIN)/python -m bench.season_close

# The service's CPU time per request of each kind (`{ __typename }`, a player, the top 20 and
# the top 100 with names, a COUNT rank, a play; then, with Redis, the top 100 from the response
# cache), read from /proc around 500 sequential requests to `leaderboard serve --workers 1`,
# over 3 interleaved rounds, and its ratio to `{ __typename }`'s (a few minutes). Results in
# bench/results/cpu.*; `python -m bench.cpu --profile top100` shows where one kind's CPU goes.
bench-cpu: install redis
	$(BIN)/python -m bench.cpu

# Sustained mixed load on a fleet of two `leaderboard serve --workers 2` processes over one
# table, caches and subscriptions on (32 clients, 3 minutes), with removals, bans and erasures
# racing the plays and ranks from the rank index; probes watched by WebSocket subscribers and
# cached-page readers on both instances must show within the staleness bound (2 s); then an
# exact check of every table invariant, of every acknowledged play and of every board's index;
# exits 1 on any violation, difference, unexpected error or stale answer. Results in
# bench/results/soak.json and soak.md.
soak: install redis
	$(BIN)/python -m soak

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .pytest-tmp node_modules examples/generated \
	  build dist leaderboard/graphiql_assets site
