"""ffmpeg as a bounded child process: a file's audio track turned into a small upload.

ffmpeg reads whatever people send (a voice note, a video note, an audio file), so it runs as
a child of its own, never in Parley's process: started without a shell, its arguments a
list; its input a file in a private temporary directory (an MP4 whose index is at its end
cannot be read from a pipe); its output read from its stdout by the event loop, at most
`most` bytes, and its stderr's last lines kept for the log. Past `seconds`, or past
`most` bytes of output, it is killed with its process group and the call fails with
`Failed`; an ffmpeg that is not installed is `Missing`, so the operator is told what to
install. Writing the input file happens in a thread: nothing here blocks the event loop.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.files import children

PROGRAM = "ffmpeg"
CHUNK = children.CHUNK
STDERR_KEPT = 4096  # bytes of ffmpeg's start and end kept: the duration, the complaint
_DURATION = re.compile(rb"Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)")


class Failed(Exception):
    """ffmpeg could not make the output: a bad input, a timeout or an output too large."""


class Missing(Failed):
    """No ffmpeg on PATH."""


@dataclass(frozen=True)
class Output:
    """What ffmpeg wrote, and how long its input said it lasts (None when it did not say)."""

    data: bytes
    duration: float | None


def installed() -> bool:
    return shutil.which(PROGRAM) is not None


async def convert(
    data: bytes, suffix: str, args: Sequence[str], *, seconds: float, most: int
) -> Output:
    """Run `ffmpeg -i <data as a file ending in suffix> <args>`, whose output goes to stdout
    (`pipe:1` in `args`); see the module docstring for the bounds."""
    program = shutil.which(PROGRAM)
    if program is None:
        raise Missing("ffmpeg is not installed")
    with tempfile.TemporaryDirectory(prefix="parley-ffmpeg-") as folder:
        source = Path(folder) / f"input{suffix}"
        await asyncio.to_thread(source.write_bytes, data)
        command = [program, "-nostdin", "-hide_banner", "-nostats", "-threads", "1"]
        process = await asyncio.create_subprocess_exec(
            *command, "-i", str(source), *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own group: killed with whatever it started
        )  # fmt: skip
        try:
            async with asyncio.timeout(seconds):
                out, err = await asyncio.gather(
                    _read(process.stdout, most, lambda: children.kill(process)),
                    _read(process.stderr, None, lambda: None),
                )
                code = await process.wait()
        except TimeoutError:
            raise Failed(f"ffmpeg took longer than {seconds:g} s") from None
        finally:
            await children.end(process)
    if out is None:
        raise Failed(f"ffmpeg wrote more than {most} bytes")
    if code != 0:
        raise Failed(f"ffmpeg failed ({code}): {_complaint(err)}")
    return Output(out, _duration(err))


async def _read(
    stream: asyncio.StreamReader | None, most: int | None, over: Callable[[], None]
) -> bytes | None:
    """The stream to its end; past `most` bytes, None, once `over()` (which kills ffmpeg)
    let the rest drain. Without `most` (stderr), only its first and last `STDERR_KEPT`
    bytes: the input's duration is said first, why ffmpeg stopped last."""
    assert stream is not None
    head, tail = bytearray(), bytearray()
    kept: bytearray | None = head
    while chunk := await stream.read(CHUNK):
        if kept is None:
            continue  # drained, so the pipe is not left full
        if most is not None:
            head += chunk
            if len(head) > most:
                kept = None
                over()
            continue
        room = STDERR_KEPT - len(head)
        head += chunk[:room]
        tail += chunk[room:] if room > 0 else chunk
        del tail[:-STDERR_KEPT]
    return None if kept is None else bytes(head + tail)


def _duration(stderr: bytes | None) -> float | None:
    found = _DURATION.search(stderr or b"")
    if found is None:
        return None
    hours, minutes, seconds = found.groups()
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def _complaint(stderr: bytes | None) -> str:
    """ffmpeg's last lines, which say why it stopped."""
    lines = (stderr or b"").decode("utf-8", errors="replace").strip().splitlines()
    return " / ".join(line[:200] for line in lines[-3:]) or "no message"
