FROM python:3.11-slim
COPY --from=ghcr.io/astral-sh/uv:latest /uv /usr/local/bin/uv
WORKDIR /app
# Compiled at build time: otherwise every new container compiles each module it imports on
# its first start, seconds of CPU added to the recovery of a replaced worker.
ENV UV_COMPILE_BYTECODE=1
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY bot bot
COPY adapters adapters
COPY worker worker
COPY bootstrap bootstrap
RUN uv sync --frozen --no-dev
ENV PATH="/app/.venv/bin:$PATH"
CMD ["parley", "--help"]
