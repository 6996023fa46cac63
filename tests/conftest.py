"""The suite's fixtures, and the line between its fast unit part and the end-to-end part.

A test is end to end (marker `e2e`) when it starts a process of Parley's or a server: every
test under tests/integration, every test that needs the Redis or PostgreSQL server (a module's
tests on a real Redis sit beside its other tests, in the folder of its package), and the tests
marked `e2e` by hand because they run `python -m worker ...`. `pytest -m "not e2e"`
(make test-unit) is the rest: it needs nothing but the virtualenv and runs in seconds.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from tests.support.order import chunked

pytest_plugins = [
    "tests.support.redis_server",
    "tests.support.postgres_server",
    "tests.fakes.llm.fixtures",
    "tests.fakes.tg.fixtures",
    "tests.fakes.slack.fixtures",
    "tests.support.stack",
    "tests.support.telegram",
    "tests.support.slack",
    "tests.support.platforms",
    "tests.support.browser",
]

INTEGRATION = Path(__file__).parent / "integration"
SERVERS = {"redis_server", "postgres_server"}


def end_to_end(item: pytest.Item) -> bool:
    if item.path.is_relative_to(INTEGRATION) or item.get_closest_marker("e2e"):
        return True
    if SERVERS & set(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)  # tests/store asks for PostgreSQL by name
    return callspec is not None and callspec.params.get("database_url") == "postgresql"


def seconds(item: pytest.Item) -> float:
    """What a test marked `slow(SECONDS)` takes at least (it waits out a default); 0 if
    it is not marked."""
    marker = item.get_closest_marker("slow")
    return float(marker.args[0]) if marker is not None and marker.args else 0.0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--docker-engine",
        action="store_true",
        help="run the tests marked `docker`, which build and run the image (make image-test)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None]:
    """Mark the end-to-end tests before `-m` selects by them; once it has, order the tests for
    xdist's worksteal (`tests.support.order.chunked`): the long ones (marked `slow`) first, the
    end-to-end files next, the unit tests last, so that no long test is picked up late and
    keeps the whole run waiting on it alone. The tests needing a Docker engine are deselected
    unless `--docker-engine` asks for them."""
    if not config.getoption("--docker-engine"):
        engine = [item for item in items if item.get_closest_marker("docker")]
        config.hook.pytest_deselected(items=engine)
        items[:] = [item for item in items if not item.get_closest_marker("docker")]
    for item in items:
        if end_to_end(item) and not item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.e2e)
    yield
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = chunked(items, workers, seconds, end_to_end, lambda item: item.path)
