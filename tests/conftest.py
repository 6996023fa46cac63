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


def heads_of_chunks(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """`items` reordered so each slow test starts as soon as the run does, on a pytest worker
    of its own as long as there are workers enough.

    xdist's `worksteal` hands each of its `workers` an equal contiguous chunk of the items in
    order, and a worker that runs out steals from the end of another's chunk. A slow test is
    therefore put at the head of a chunk: the longest first, each to the chunk whose slow
    tests add up to the least (a test left in the middle of a chunk would start late, and
    two long ones in one chunk would run one after the other)."""
    slow = sorted((item for item in items if seconds(item)), key=seconds, reverse=True)
    if not slow:
        return items
    rest = [item for item in items if not seconds(item)]
    heads: list[list[pytest.Item]] = [[] for _ in range(max(1, workers))]
    for item in slow:
        min(heads, key=lambda head: sum(map(seconds, head))).append(item)
    ordered: list[pytest.Item] = []
    for n, head in enumerate(heads):
        # the sizes worksteal gives: what is left, split evenly among the workers left
        size = (len(items) - len(ordered)) // (len(heads) - n)
        ordered += head + rest[: max(0, size - len(head))]
        del rest[: max(0, size - len(head))]
    return ordered + rest


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
    """Mark the end-to-end tests before `-m` selects by them; once it has, start the long
    tests first (`heads_of_chunks`): a long test (marked `slow`) picked up late would keep the
    whole run waiting on it alone. The tests needing a Docker engine are deselected unless
    `--docker-engine` asks for them."""
    if not config.getoption("--docker-engine"):
        engine = [item for item in items if item.get_closest_marker("docker")]
        config.hook.pytest_deselected(items=engine)
        items[:] = [item for item in items if not item.get_closest_marker("docker")]
    for item in items:
        if end_to_end(item) and not item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.e2e)
    yield
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = heads_of_chunks(items, workers)
