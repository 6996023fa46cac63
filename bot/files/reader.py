"""The reader process: one message's files made ready for the models and stored, in a process
of its own whose memory and CPU are bounded, so a file that slips past every bound of the
formats (`bot.files.images`, `bot.files.documents`) costs this process alone, never Parley's.

Started for one message by `bot.files.reading` as `python -m bot.files.reader`. Its stdin
carries one line of JSON, the job (what the files are for, the limits, the store's root, each
file's name and length), then the files' bytes one after another. It answers on stdout with
a line of JSON per step: `{"reading": i}` as it starts on a file, so a process ended for its
limits is known to have been reading that one, and last `{"stored": [...]}` (each file's
hash, type, size, and its text's hash) or `{"refused": i, "why": "..."}`, the sentence for
the person; the last line also says the process's peak memory (`peak_mb`). Nothing is
stored unless every file was made ready. A reader started ahead of its file (`--ahead`, by
`bot.files.spare`) loads the image library first, and ends quietly if its stdin closes instead.
The answer is plain JSON, never pickle: a process that read a hostile file is not trusted
with its parent's code.

The limits are set before any file's byte is read: the address space (RLIMIT_AS, so a
decoder that wants more fails with MemoryError, told as such) and the CPU time of each file
(RLIMIT_CPU, then SIGXCPU). After half a second of CPU the process lowers its own priority:
a heavy file yields the cores to the quick ones of other people.

What a file is for (`purpose`): `people`, a file a person sent, made ready for the models (an
image scaled, a document's text taken out); `tool`, a file a tool made for the person, stored
as it is, its type from its bytes (an image decoded whole first, so a broken one is not sent).
"""

from __future__ import annotations

import json
import mimetypes
import os
import resource
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from bot.files import by_content

Purpose = Literal["people", "tool"]
MAX_JOB = 64 * 1024  # bytes of the job's line
MB = 1024 * 1024
NICE_AFTER = 0.5  # seconds of CPU before the process gives way
UNREAD = "this kind of file is not read; send an image, a PDF, a Word document or a text file"
DAMAGED = "it could not be read; it may be damaged"


@dataclass(frozen=True)
class Ready:
    """A file made ready: the bytes to store, their type, and a document's text."""

    data: bytes
    media_type: str
    text: str | None = None


def main() -> None:
    stdin, out = sys.stdin.buffer, sys.stdout.buffer
    if "--ahead" in sys.argv:  # started ahead of its file (`bot.files.spare`): images first
        from bot.files import documents, images  # noqa: F401, PLC0415

        images.preload()
    line = stdin.readline(MAX_JOB)
    if not line:
        return  # a spare let go, or its parent gone
    job = json.loads(line)
    seconds = float(job["seconds"])
    limit_process(int(job["memory_mb"]), len(job["files"]) * seconds)
    made: list[Ready] = []
    for index, file in enumerate(job["files"]):
        _say(out, reading=index)
        _cpu_for(seconds)
        data = _exactly(stdin, int(file["size"]))
        ready = _made_ready(data, str(file["name"]), job["purpose"], int(job["memory_mb"]))
        if isinstance(ready, str):
            _say(out, refused=index, why=ready, peak_mb=_peak_mb())
            return
        made.append(ready)
    root = Path(job["store"])
    _say(out, stored=[_stored(root, ready) for ready in made], peak_mb=_peak_mb())


def _made_ready(data: bytes, name: str, purpose: Purpose, memory_mb: int) -> Ready | str:
    """The file made ready for its purpose, or the sentence that says why not."""
    try:
        return _for_people(data, name) if purpose == "people" else _for_tool(data, name)
    except MemoryError:
        return f"reading it takes more than the {memory_mb} MB a file may use"
    except Exception as exc:  # what no format's bound foresaw: told, and logged by the parent
        print(f"reader: {type(exc).__name__}: {exc}"[:500], file=sys.stderr)
        return DAMAGED


def _for_people(data: bytes, name: str) -> Ready | str:
    from bot.files import documents, images  # noqa: PLC0415 (what the file needs, alone)

    try:
        if images.media_type(data) is not None:
            image = images.prepare(data)
            return Ready(image.data, image.media_type)
        if documents.is_pdf(data):
            document = documents.read_pdf(data)
        elif documents.is_docx(data):
            document = documents.read_docx(data)
        elif (text := documents.read_text(data, name)) is not None:
            document = text
        else:
            return UNREAD
    except (images.NotAnImage, documents.NotADocument) as exc:
        return str(exc)
    return Ready(document.data, document.media_type, document.text)


def _for_tool(data: bytes, name: str) -> Ready | str:
    from bot.files import documents, images  # noqa: PLC0415

    kind = images.media_type(data)
    if kind is not None:
        try:
            images.check(data)
        except images.NotAnImage as exc:
            return str(exc)
        return Ready(data, kind)
    if documents.is_pdf(data):
        return Ready(data, documents.PDF)
    guessed = mimetypes.guess_type(name, strict=False)[0]
    return Ready(data, guessed or "application/octet-stream")


def _stored(root: Path, ready: Ready) -> dict[str, Any]:
    sha256 = by_content.write_once(root, ready.data)
    text = None if ready.text is None else by_content.write_once(root, ready.text.encode())
    return {"sha256": sha256, "media_type": ready.media_type, "size": len(ready.data),
            "extract": text}  # fmt: skip


def limit_process(memory_mb: int, cpu_seconds: float) -> None:
    """The process's bounds (see the module docstring), and its priority lowered later."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * MB, memory_mb * MB))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hard = int(usage.ru_utime + usage.ru_stime + cpu_seconds) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (hard - 1, hard))
    signal.signal(signal.SIGPROF, lambda signum, frame: os.nice(10))
    signal.setitimer(signal.ITIMER_PROF, NICE_AFTER)


def _cpu_for(seconds: float) -> None:
    """This file's share of CPU time: the soft limit moved to what is used now plus it."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = min(int(usage.ru_utime + usage.ru_stime + seconds) + 1, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _peak_mb() -> float:
    """The most memory this process held (VmHWM: since its exec, unlike `ru_maxrss`)."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


def _exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise SystemExit("reader: the input ended early")
    return data


def _say(out: IO[bytes], **said: Any) -> None:
    out.write(json.dumps(said).encode() + b"\n")
    out.flush()


if __name__ == "__main__":
    main()
