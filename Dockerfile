# Parley's image: three stages, and only the last one ships.
#   assets  the pages' browser libraries, from npm at web/package-lock.json's versions
#   build   the virtualenv, made by uv (with a compiler for any dependency without a wheel)
#   (last)  python slim and that virtualenv (ffmpeg in it), run as a user without privileges
# Every base is pinned by version and by the digest of its multi-architecture index, so a tag
# moved on the registry changes nothing here; `docker buildx imagetools inspect IMAGE:TAG`
# prints the digest to write when a version is raised. uv comes from PyPI at the version the
# project is locked with, checked against the hashes PyPI lists for its wheels.

# The pages' browser libraries, installed from npm at web/package-lock.json's versions by the
# script `make assets` runs (web/vendor.sh): the image serves the same files as a checkout.
FROM node:22.12.0-bookworm-slim@sha256:35531c52ce27b6575d69755c73e65d4468dba93a25644eed56dc12879cae9213 AS assets
WORKDIR /src
COPY web/package.json web/package-lock.json web/vendor.sh web/
COPY adapters/http/vendor.txt adapters/http/
RUN sh web/vendor.sh

FROM python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
# uv 0.13.9's Linux wheels for x86_64 and arm64 (manylinux 2.17 and 2.28), by their sha256.
RUN printf '%s' 'uv==0.13.9 \
    --hash=sha256:d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19 \
    --hash=sha256:5435c5ce14a56431208ca0996416d310f1598e8c2c8ba707688985a16bb82dbe \
    --hash=sha256:ecb6028d79dc96fbeafffe5c8af62a7099487ebc05a701e76714eebcffd06375' > /tmp/uv.txt \
    && pip install --no-cache-dir --require-hashes --only-binary=:all: -r /tmp/uv.txt
WORKDIR /app
# Compiled at build time: otherwise every new container compiles each module it imports on
# its first start, seconds of CPU added to the recovery of a replaced worker. The venv uses
# the base image's Python, the same one the last stage has at the same path.
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv
# ffmpeg (voice and video notes) is the `ffmpeg` extra: one static program from PyPI, 30 MB,
# where Debian's package brings 300 libraries and 200 MB. EXTRAS adds one more extra, e.g.
# `--build-arg EXTRAS=charts` for matplotlib in run_python's sandbox (which needs the worker's
# container to allow new namespaces: docker-compose.yml).
ARG EXTRAS=
COPY pyproject.toml uv.lock README.md hatch_build.py ./
RUN uv sync --frozen --no-dev --no-install-project --extra ffmpeg ${EXTRAS:+--extra $EXTRAS}
COPY bot bot
COPY adapters adapters
COPY worker worker
COPY bootstrap bootstrap
COPY --from=assets /src/adapters/http/static/vendor adapters/http/static/vendor
# Parley itself is installed as a wheel (not a link to the sources), with its pages, libraries
# and persona inside: the last stage needs the virtualenv alone.
RUN uv sync --frozen --no-dev --no-editable --extra ffmpeg ${EXTRAS:+--extra $EXTRAS} \
    && ln -s "$(.venv/bin/python -c 'import imageio_ffmpeg as i; print(i.get_ffmpeg_exe())')" \
       .venv/bin/ffmpeg

FROM python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d
# A user without privileges; data/ is theirs so the Compose volumes mounted under it are too.
RUN useradd --system --uid 10001 --user-group --home-dir /app --no-create-home parley \
    && mkdir -p /app/data/workspaces /app/data/files && chown -R parley:parley /app/data
COPY --from=build /app/.venv /app/.venv
WORKDIR /app
ENV PATH="/app/.venv/bin:$PATH" PYTHONUNBUFFERED=1
USER parley
EXPOSE 8080
# The web process's check; docker-compose.yml gives the worker and the scheduler their own
# (`parley health worker`, `parley health scheduler`).
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["parley", "health", "web"]
CMD ["parley", "web"]
