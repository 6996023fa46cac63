# The pages' browser libraries, installed from npm at web/package-lock.json's versions by the
# script `make assets` runs (web/vendor.sh): the image serves the same files as a checkout.
FROM node:22-slim AS assets
WORKDIR /src
COPY web/package.json web/package-lock.json web/vendor.sh web/
COPY adapters/http/vendor.txt adapters/http/
RUN sh web/vendor.sh

FROM python:3.11-slim
# ffmpeg takes the sound out of the voice and video notes an endpoint does not take as they are.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ffmpeg \
    && rm -rf /var/lib/apt/lists/*
COPY --from=ghcr.io/astral-sh/uv:latest /uv /usr/local/bin/uv
WORKDIR /app
# Compiled at build time: otherwise every new container compiles each module it imports on
# its first start, seconds of CPU added to the recovery of a replaced worker.
ENV UV_COMPILE_BYTECODE=1
COPY pyproject.toml uv.lock README.md hatch_build.py ./
RUN uv sync --frozen --no-dev --no-install-project
COPY bot bot
COPY adapters adapters
COPY worker worker
COPY bootstrap bootstrap
COPY --from=assets /src/adapters/http/static/vendor adapters/http/static/vendor
RUN uv sync --frozen --no-dev
ENV PATH="/app/.venv/bin:$PATH"
CMD ["parley", "--help"]
