# Two commands set everything up on a fresh machine: `make serve` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
export LEADERBOARD_CACHE_DIR ?= $(CURDIR)/.cache

.PHONY: install serve test lint typecheck pytest schema bench clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

serve: install
	$(BIN)/leaderboard serve

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/pytest

test: lint typecheck pytest

schema: install
	$(BIN)/leaderboard export-schema > schema.graphql

bench: install
	$(BIN)/python -m bench.access_patterns

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
