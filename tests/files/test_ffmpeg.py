"""ffmpeg as a bounded child process: what it makes, and each bound (its time, its output,
a bad input, no ffmpeg at all) as one `Failed` that says which, with no child left behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bot.files import ffmpeg
from tests.support.audio import tone

WAV_OUT = ["-map", "0:a:0", "-f", "wav", "pipe:1"]


def children() -> list[str]:
    """This process's ffmpeg children that are still there (zombies included); not its
    others, such as the Redis a test of the same pytest worker started."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            command, fields = stat.read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        if int(fields.split()[1]) == os.getpid() and command.endswith("(ffmpeg"):
            found.append(stat.parent.name)
    return found


async def test_the_output_comes_from_stdout_with_the_inputs_length() -> None:
    made = await ffmpeg.convert(tone("ogg", seconds=2.0), ".ogg", WAV_OUT, seconds=30, most=1 << 20)
    assert made.data.startswith(b"RIFF") and made.data[8:12] == b"WAVE"
    assert made.duration is not None and 1.9 < made.duration < 2.1
    assert children() == []


async def test_a_bad_input_fails_with_ffmpegs_reason() -> None:
    with pytest.raises(ffmpeg.Failed, match="Invalid data found") as caught:
        await ffmpeg.convert(b"\x00ftypisom" + b"\x17" * 4000, ".mp4", WAV_OUT, seconds=30,
                             most=1 << 20)  # fmt: skip
    assert "\n" not in str(caught.value)
    assert children() == []


async def test_an_ffmpeg_past_its_time_is_killed() -> None:
    """A second input read in real time (`-re`) for a minute: ended at 1 s, and reaped."""
    slow = ["-re", "-f", "lavfi", "-i", "sine=duration=60", "-map", "1:a", "-f", "wav", "pipe:1"]
    started = time.monotonic()
    with pytest.raises(ffmpeg.Failed, match="took longer than 1 s"):
        await ffmpeg.convert(tone("ogg"), ".ogg", slow, seconds=1, most=1 << 30)
    assert time.monotonic() - started < 10
    assert children() == []


async def test_an_output_past_its_cap_is_refused_and_the_process_killed() -> None:
    long_tone = tone("ogg", seconds=20.0)
    with pytest.raises(ffmpeg.Failed, match="more than 10000 bytes"):
        await ffmpeg.convert(long_tone, ".ogg", WAV_OUT, seconds=30, most=10_000)
    assert children() == []


async def test_no_ffmpeg_is_said_as_such(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ffmpeg.Missing, match="ffmpeg is not installed"):
        await ffmpeg.convert(b"OggS", ".ogg", WAV_OUT, seconds=30, most=1 << 20)
    assert not ffmpeg.installed()
