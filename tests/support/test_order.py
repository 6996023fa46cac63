"""`chunked`: the long tests at the heads of worksteal's chunks, the end-to-end files next, each
whole and spread over the chunks, the unit tests at the ends."""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.order import E2E_SECONDS, chunked


@dataclass(frozen=True)
class Case:
    file: str
    name: str
    e2e: bool = False
    slow: float = 0.0


def order(items: list[Case], workers: int) -> list[Case]:
    return chunked(items, workers, lambda t: t.slow, lambda t: t.e2e, lambda t: t.file)


def worksteal_chunks(items: list[Case], workers: int) -> list[list[Case]]:
    """The chunks xdist's worksteal hands out first: what is left, split evenly."""
    chunks, left = [], list(items)
    for n in range(workers):
        size = len(left) // (workers - n)
        chunks.append(left[:size])
        del left[:size]
    return chunks


def suite() -> list[Case]:
    """As collected: unit files and end-to-end files mixed, two long tests among them."""
    tests = [Case("a_unit", f"u{n}") for n in range(40)]
    tests += [Case("b_e2e", f"e{n}", e2e=True) for n in range(9)]
    tests += [Case("b_e2e", "timeout", e2e=True, slow=180)]
    tests += [Case("c_unit", f"u{n}") for n in range(30)]
    tests += [Case("d_e2e", f"e{n}", e2e=True) for n in range(5)]
    tests += [Case("e_e2e", f"e{n}", e2e=True) for n in range(4)]
    tests += [Case("f_e2e", "restart", e2e=True, slow=40)]
    return tests + [Case("g_unit", f"u{n}") for n in range(11)]


def test_each_chunk_starts_long_then_end_to_end_and_ends_on_unit_tests() -> None:
    tests = suite()
    ordered = order(tests, 3)
    assert sorted(ordered, key=id) == sorted(tests, key=id)  # every test, once
    chunks = worksteal_chunks(ordered, 3)
    assert [chunk[0].name for chunk in chunks[:2]] == ["timeout", "restart"]
    for chunk in chunks:
        kinds = ["slow" if t.slow else "e2e" if t.e2e else "unit" for t in chunk]
        assert kinds == sorted(kinds, key=["slow", "e2e", "unit"].index), kinds
        assert kinds[-1] == "unit"


def test_end_to_end_files_stay_whole_and_go_where_there_is_least_work() -> None:
    chunks = worksteal_chunks(order(suite(), 3), 3)
    files = [{t.file for t in chunk if t.e2e and not t.slow} for chunk in chunks]
    # The long tests weigh 180 s and 40 s: the biggest file (9 tests) goes to the third chunk,
    # the next one (5) too, while 9 tests weigh less than 40 s, and the last to the second.
    assert 9 * E2E_SECONDS < 40 < 14 * E2E_SECONDS
    assert files == [set(), {"e_e2e"}, {"b_e2e", "d_e2e"}]
    for chunk in chunks:
        names = [t.name for t in chunk if t.file == "b_e2e" and not t.slow]
        assert names in ([], [f"e{n}" for n in range(9)])


def test_one_worker_runs_the_long_tests_first_and_the_unit_tests_last() -> None:
    ordered = order(suite(), 1)
    assert [t.name for t in ordered[:2]] == ["timeout", "restart"]
    assert {t.file for t in ordered[2:20]} == {"b_e2e", "d_e2e", "e_e2e"}
    assert all(not t.e2e for t in ordered[20:])
