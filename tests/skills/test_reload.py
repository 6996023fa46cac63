"""The skills' folders looked at again, at most every few seconds, without a restart: a skill
added, edited or removed is seen once the interval has passed, and not read again before."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.skills.library import Skills
from tests.skills.making import write_skill


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_change_is_seen_after_the_interval_and_not_before(tmp_path: Path) -> None:
    clock = Clock()
    skills = Skills([tmp_path], interval=2.0, clock=clock)
    assert (await skills.current()).skills == {}
    write_skill(tmp_path, "greeting", "Greet people.", "Say hello warmly.")
    clock.now += 1.0
    assert (await skills.current()).skills == {}  # looked at a second ago: not again yet
    clock.now += 1.5
    library = await skills.current()
    assert library.skills["greeting"].instructions == "Say hello warmly."

    write_skill(tmp_path, "greeting", "Greet people.", "Say hello in French.")
    clock.now += 2.5
    assert (await skills.current()).skills["greeting"].instructions == "Say hello in French."
    shutil.rmtree(tmp_path / "greeting")
    clock.now += 2.5
    assert (await skills.current()).skills == {}


async def test_an_unchanged_folder_is_not_read_again(tmp_path: Path) -> None:
    clock = Clock()
    write_skill(tmp_path, "greeting")
    skills = Skills([tmp_path], interval=2.0, clock=clock)
    first = await skills.current()
    clock.now += 10
    assert await skills.current() is first  # the same fingerprint: the same library
