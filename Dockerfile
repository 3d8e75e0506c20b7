# The service's container image: `leaderboard serve` on port 8080 as a non-root user.
#
# The builder makes the wheel with GraphiQL's four browser files inside (fetched with npm,
# each tarball's sha512 checked against the pins in leaderboard/graphiql.py) and installs it
# with its pinned dependencies into /opt/venv; the runtime stage is the slim Python image
# with that virtual environment and nothing else (no npm, Node.js, Java or compilers).
# Both stages use the same tag, so the venv's interpreter path exists in the runtime. The
# base image is pinned by tag, not by digest.

FROM python:3.11-slim AS builder

# Debian's npm, only to fetch the pinned tarballs; its version is whatever the base image's
# Debian release carries, which does not matter: the tarballs are verified by their digests.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends npm \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY pyproject.toml constraints.txt README.md ./
COPY dynamo dynamo
COPY resolvers resolvers
COPY gql gql
COPY edge edge
COPY leaderboard leaderboard
COPY rankindex rankindex

# A throwaway venv with the dependencies runs the build step; the wheel built afterwards
# carries the files it wrote into leaderboard/graphiql_assets/. The build venv's pip then
# installs the wheel into /opt/venv, which has no pip of its own.
RUN python -m venv /opt/build \
    && /opt/build/bin/pip install --no-cache-dir --constraint constraints.txt . \
    && LEADERBOARD_CACHE_DIR=/tmp/npm-cache /opt/build/bin/python -m leaderboard.graphiql_bundle \
        --output leaderboard/graphiql_assets \
    && rm -rf build leaderboard_service.egg-info \
    && /opt/build/bin/pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
    && python -m venv --without-pip /opt/venv \
    && /opt/build/bin/pip --python /opt/venv/bin/python install --no-cache-dir \
        --constraint constraints.txt /wheels/*.whl

FROM python:3.11-slim

# The user "leaderboard", uid and gid 10001, with no home and no login shell.
RUN groupadd --system --gid 10001 leaderboard \
    && useradd --system --no-log-init --uid 10001 --gid 10001 --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin leaderboard
COPY --from=builder /opt/venv /opt/venv

ENV PATH="/opt/venv/bin:$PATH" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LEADERBOARD_CACHE_DIR=/tmp/leaderboard-cache

WORKDIR /tmp
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/livez', timeout=4)"]

# The DynamoDB endpoint comes from AWS_ENDPOINT_URL_DYNAMODB, the number of worker
# processes from LEADERBOARD_WORKERS (default one per core).
CMD ["leaderboard", "serve", "--host", "0.0.0.0", "--port", "8080"]
