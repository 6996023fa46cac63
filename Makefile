# Two commands for a newcomer: `make run` chats with the agent, `make test` runs the suite.
# Each installs what it needs first: uv (from PyPI) and the locked virtualenv. uv goes to
# ~/.local/bin, which a fresh shell's PATH does not have, so every command the README shows
# is a target here (`make chat`, `make pytest PYTEST_ARGS=...`), which finds uv by its path.

SHELL := /bin/bash
export PATH := $(HOME)/.local/bin:$(PATH)
UV := $(shell command -v uv 2>/dev/null || echo $(HOME)/.local/bin/uv)
PYTEST_ARGS ?=
# The whole suite in one pytest run, end-to-end and unit tests side by side: the end-to-end
# ones spend most of their time waiting (timers, rate limits, processes starting, the
# network), and the unit ones use the cores meanwhile; the long ones start first, each on a
# pytest worker of its own, the other end-to-end files next and the unit tests last, so the
# run ends on short tests (see tests/support/order.py). Six workers keep two cores busy: the
# suite's processes use 1.4 of them on four. Each worker starts its own Redis and PostgreSQL
# when a test of its needs them.
PYTEST_WORKERS ?= 6
# The unit part alone (make test-unit): the tests that start no process and no server (see
# tests/conftest.py), on two pytest workers: each spends a third of its time importing the
# SDKs, one core each.
UNIT := -n 2 -m "not e2e"

.PHONY: run test image-test test-unit lint audit sync clean bench bench-smoke system-run system-test assets dist \
	chat parley fake-llm pytest

$(UV):
	python3 -m pip install --user --quiet uv \
	  || python3 -m pip install --user --quiet --break-system-packages uv

# Compiled once here: where PYTHONDONTWRITEBYTECODE is set, as on many CI machines and images,
# every process would otherwise compile each module it imports (twice the CPU of a start).
.venv/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --compile-bytecode --all-extras
	@touch $@

sync: .venv/.synced

# What the system must provide, installed with apt-get when missing. Running needs
# redis-server, npm (for the pages' browser libraries) and ffmpeg (voice notes); the tests also need PostgreSQL (they start their own server) and Chromium with
# its driver for the web chat's browser test.
RUN_PACKAGES := redis-server:redis-server npm:npm ffmpeg:ffmpeg
TEST_PACKAGES := $(RUN_PACKAGES) chromium:chromium chromedriver:chromium-driver
# $(call apt-install,COMMAND:PACKAGE ...,extra shell test appending to $$missing)
# apt-get through .ci/apt-get, which waits for another apt to finish (unattended upgrades
# hold its locks on a machine's first boot) instead of failing at once.
define apt-install
	@missing=""; for pair in $(1); do \
	  command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair##*:}"; done; \
	$(2) \
	if [ -n "$$missing" ]; then \
	  echo "Installing$$missing with apt-get"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO sh .ci/apt-get update -qq && $$SUDO sh .ci/apt-get install -y -qq $$missing; fi
endef
HAS_POSTGRES := ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql";

# The browser libraries of the web chat and the dashboard, at the versions web/package-lock.json
# pins, copied from the npm registry's packages into the Python package: the pages load them
# from the server itself, never from a CDN, so they work on a machine that is offline.
# web/vendor.sh copies the files adapters/http/vendor.txt lists; the Docker image runs it too.
VENDOR := adapters/http/static/vendor
VENDORED := $(addprefix $(VENDOR)/,$(notdir $(shell grep -v '^\#' adapters/http/vendor.txt)))

$(VENDORED) &: web/package.json web/package-lock.json web/vendor.sh adapters/http/vendor.txt
	sh web/vendor.sh

assets: system-run $(VENDORED)

# A wheel and an sdist in dist/, with the browser libraries (the build refuses to go without).
dist: sync assets
	$(UV) build

system-run:
	$(call apt-install,$(RUN_PACKAGES),)

system-test:
	$(call apt-install,$(TEST_PACKAGES),$(HAS_POSTGRES))

run: sync system-run assets
	@test -f .env || { cp .env.example .env; echo "Created .env from .env.example: put your model's API key in it."; }
	$(UV) run --frozen parley up

# The agent in this terminal, without Redis (reads .env; stdin may be a pipe).
chat: sync
	@$(UV) run --frozen parley chat

# Any other command of Parley's, e.g. make parley ARGS="doctor --model" or ARGS="pair list".
parley: sync
	@$(UV) run --frozen parley $(ARGS)

# The fake model APIs on their own, for demos; it prints the lines to put in .env.
FAKE_LLM_PORT ?= 9999
fake-llm: sync
	@$(UV) run --frozen python -m tests.fakes.llm --port $(FAKE_LLM_PORT)

# Some of the tests, e.g. make pytest PYTEST_ARGS="tests/integration/telegram -q"; with what
# any test may need installed, as for `make test`.
pytest: sync system-test assets
	$(UV) run --frozen pytest $(PYTEST_ARGS)

LINT := $(UV) run --frozen ruff check . && $(UV) run --frozen ruff format --check . \
	&& $(UV) run --frozen mypy && $(UV) run --frozen lint-imports

lint: sync
	$(LINT)

# Known vulnerabilities in the locked dependencies: pip-audit on uv.lock's packages, npm audit on
# web/package-lock.json (.ci/audit.py). Fails on an advisory .ci/audit-ignore.txt does not list;
# a service out of reach is one line, "audit: NOT AUDITED (...)", and fails only with
# AUDIT_STRICT=1.
audit: | $(UV)
	python3 .ci/audit.py

# Lint, then the suite. pytest rewrites the asserts of each test module as it imports it, and
# each of the six pytest workers imports them all; where PYTHONDONTWRITEBYTECODE is set (as on
# many CI machines and images) nothing keeps the rewritten code, so every worker would rewrite
# everything again: a third of its start, six times over, before the first test runs. Instead
# one collection, beside lint (whose mypy keeps one core busy), writes the rewritten modules and
# Parley's compiled ones once, and the workers load them.
test: sync system-test assets
	PYTHONDONTWRITEBYTECODE= $(UV) run --frozen pytest --collect-only -q -p no:cacheprovider \
	  >/dev/null 2>&1 & $(LINT); linted=$$?; wait $$!; exit $$linted
	$(UV) run --frozen pytest -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The image built by a Docker engine and a chat run through it (tests marked `docker`); .ci/run
# runs it where `docker info` answers. Not part of `make test`: most machines have no engine.
image-test: system-test assets
	$(UV) run --frozen pytest -n 0 --docker-engine -m docker -s $(PYTEST_ARGS)

test-unit: sync assets
	$(UV) run --frozen pytest $(UNIT) $(PYTEST_ARGS)

clean:
	rm -rf .venv .pytest_cache .mypy_cache .ruff_cache web/node_modules $(VENDOR)

# Every benchmark and one table; e.g. make bench BENCH_ARGS="--quick pickup" or "--table docs/PERFORMANCE.md".
bench: sync system-test assets
	$(UV) run --frozen python -m tests.bench $(BENCH_ARGS)

# Every benchmark with few samples, four at once (some three minutes): that each still runs and
# reports all it promises, after a change to a benchmark or to what it drives.
bench-smoke: sync system-test assets
	$(UV) run --frozen python -m tests.bench --quick --jobs 4
