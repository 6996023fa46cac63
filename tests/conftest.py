"""The suite's fixtures, and the line between its fast unit part and the end-to-end part.

A test is end to end (marker `e2e`) when it starts a process of Parley's or a server: every
test under tests/integration, every test that needs the Redis or PostgreSQL server (a module's
tests on a real Redis sit beside its other tests, in the folder of its package), and the tests
marked `e2e` by hand because they run `python -m worker ...`. `pytest -m "not e2e"`
(make test-unit) is the rest: it needs nothing but the virtualenv and runs in seconds.
"""

from __future__ import annotations

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the end-to-end tests, and start the long ones first: with several pytest
    workers, a long test (marked `slow`) picked up last would keep the whole run waiting
    on it alone."""
    for item in items:
        if end_to_end(item) and not item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.e2e)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable sort
