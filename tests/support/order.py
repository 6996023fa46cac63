"""The order the suite's tests are handed to xdist's `worksteal` scheduler in (tests/conftest.py).

`worksteal` hands each of its `workers` an equal contiguous chunk of the items, in order, and a
worker that runs out steals the second half of the longest queue left, from its end. So what a
chunk starts with starts at once, and what chunks end with is what the run ends on. Each chunk
is therefore laid out as:

1. its share of the long tests (marked `slow(SECONDS)`), the longest first: each starts as the
   run does, on a worker of its own while there are workers enough;
2. its share of the end-to-end files (processes and servers started, timers waited out), each
   file's tests together, as collected;
3. unit tests, to the chunk's size: short, so the run ends on tests any worker can steal,
   never on one long test that started late.

The long tests and the end-to-end files are dealt to the chunk with the least estimated work so
far, biggest first; without measured durations a test counts for its `slow` seconds, and an
unmarked end-to-end test for `E2E_SECONDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
E2E_SECONDS = 3.0  # what an unmarked end-to-end test takes, about, on a quiet 2-core machine


def chunked(
    items: Sequence[T],
    workers: int,
    seconds: Callable[[T], float],
    end_to_end: Callable[[T], bool],
    file_of: Callable[[T], object],
) -> list[T]:
    """`items` in the order above, for `workers` chunks; `seconds` is what a test is marked to
    take (0 if unmarked), `end_to_end` whether it starts processes or servers, `file_of` its
    module."""
    slow = sorted((item for item in items if seconds(item)), key=seconds, reverse=True)
    files: dict[object, list[T]] = {}
    for item in items:
        if not seconds(item) and end_to_end(item):
            files.setdefault(file_of(item), []).append(item)
    unit = [item for item in items if not seconds(item) and not end_to_end(item)]

    heads: list[list[T]] = [[] for _ in range(max(1, workers))]
    work = [0.0] * len(heads)
    for item in slow:
        least = work.index(min(work))
        heads[least].append(item)
        work[least] += seconds(item)
    owner: dict[object, int] = {}
    for name in sorted(files, key=lambda name: len(files[name]), reverse=True):
        owner[name] = least = work.index(min(work))
        work[least] += E2E_SECONDS * len(files[name])
    for name, tests in files.items():  # each chunk's files in the order they were collected
        heads[owner[name]] += tests

    ordered: list[T] = []
    for n, head in enumerate(heads):
        # the sizes worksteal gives: what is left, split evenly among the workers left
        size = (len(items) - len(ordered)) // (len(heads) - n)
        ordered += head + unit[: max(0, size - len(head))]
        del unit[: max(0, size - len(head))]
    return ordered + unit
