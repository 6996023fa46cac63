"""Running one program in the sandbox, from the worker's event loop.

The stage (`bot.sandbox.stage`) is started with `asyncio.create_subprocess_exec`, so the
loop never waits on it. Its output is read in chunks and counted as it comes: past the limit
the run is stopped, so a program that prints forever costs the worker at most the limit in
memory. At the wall clock, or when the caller is cancelled, the stage's process group is
killed; each process of the sandbox dies with its parent, and the kernel ends every other
process of the run's PID namespace with its first one. The run's directory is removed in
every case.

The sandbox's first process is a fork of the stage, so it shows what the stage was started
with in `/proc/1/cmdline`, which the program can read. The stage is therefore started as
`sandbox -I -S -` on the bare interpreter, and what it is to do (where Parley's modules
are, the run's plan) comes as a script on its standard input, which nothing inside can read
back: the command line names neither Parley's installation nor the run's folder.

The files the program wrote in `./out/` are copied by the sandbox's init into the run's `out`
folder (`outputs`) and read from there in a thread, before the folder is removed, both
within the run's `Bound` (what its turn may still be handed).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.sandbox import outputs, packages
from bot.sandbox.limits import RunPlan, SandboxLimits
from bot.sandbox.outputs import Bound, Leftovers, OutFile, Unsent

log = logging.getLogger(__name__)
CHUNK = 65_536
STAGE_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
# The stage's command line: Python, isolated, without site, running the script on stdin.
STAGE_ARGV = ("sandbox", "-I", "-S", "-")
STAGE_SCRIPT = """\
import sys
sys.path[:0] = {path!r}
from bot.sandbox.stage import main
sys.exit(main({plan!r}))
"""
RUN_PREFIX = "parley-sandbox-"
PROGRAM = "main.py"
WORKSPACE = "workspace"
MB = 1_048_576
MAX_WORKSPACE = 64 * MB  # the most of a session's files a shell run copies (its quota is 50)


class SandboxError(Exception):
    """The sandbox could not run the program at all (the machine refused a step)."""


@dataclass(frozen=True)
class Outcome:
    output: str
    exit_code: int | None = None  # None when a signal or a limit ended the program
    signal: int | None = None
    cpu_seconds: float | None = None
    timed_out: bool = False
    cut: bool = False  # the output went past the limit and the program was stopped
    files: tuple[OutFile, ...] = ()  # what it wrote in ./out/, within `bound`
    bound: Bound = field(default_factory=Bound)
    unsent: tuple[Unsent, ...] = ()  # files of ./out/ past the bound, named
    unlisted: int = 0  # more of them, past those named


def interpreter() -> tuple[str, str]:
    """The Python the programs run on: the installation under the worker's virtualenv, so
    that only the standard library is there, never Parley's packages."""
    executable = getattr(sys, "_base_executable", sys.executable)
    return os.path.realpath(executable), os.path.realpath(sys.base_prefix)


class _Output:
    """The output read so far, counted in characters, never more than `limit` of them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.length = 0
        self.cut = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def add(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        room = self.limit - self.length
        if len(text) > room:
            text, self.cut = text[:room], True
        self.parts.append(text)
        self.length += len(text)

    @property
    def text(self) -> str:
        return "".join(self.parts)


async def _read(stream: asyncio.StreamReader, output: _Output) -> None:
    while not output.cut:
        data = await stream.read(CHUNK)
        if not data:
            output.add(b"", final=True)
            return
        output.add(data)


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def _status(fd: int) -> dict[str, Any]:
    """The stage's last report, if it made one (a killed stage makes none)."""
    os.set_blocking(fd, False)
    try:
        lines = os.read(fd, CHUNK).decode(errors="replace").splitlines()
    except BlockingIOError:
        return {}
    found: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    return found


def stage_script(plan: RunPlan) -> bytes:
    """What the stage runs: `bot.sandbox.stage` with `plan`, its modules found where the
    worker finds them (the bare interpreter knows no virtualenv)."""
    path = [entry for entry in sys.path if os.path.isabs(entry)]
    return STAGE_SCRIPT.format(path=path, plan=plan.to_json()).encode()


async def _spawn(plan: RunPlan) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        *STAGE_ARGV,
        executable=plan.python,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        pass_fds=(plan.status_fd,),
        env=STAGE_ENVIRONMENT,
        start_new_session=True,
    )
    assert process.stdin is not None
    process.stdin.write(stage_script(plan))
    # a stage that died before reading it is reported by its output and status
    with contextlib.suppress(ConnectionError):
        await process.stdin.drain()
    process.stdin.close()
    return process


async def _watch(
    process: asyncio.subprocess.Process, limits: SandboxLimits
) -> tuple[_Output, bool]:
    """Read the output until the program ends, the limit or the wall clock (then True); a
    run cut short, or a caller cancelled, kills the stage's process group."""
    assert process.stdout is not None
    output = _Output(limits.output_limit)
    timed_out = False
    try:
        async with asyncio.timeout(limits.timeout):
            await _read(process.stdout, output)
            if not output.cut:
                await process.wait()
    except TimeoutError:
        timed_out = True
    finally:
        _kill(process)
        # the pipe must reach its end before the process counts as ended; what is still in
        # it is bounded (its writers are dead) and dropped
        while await process.stdout.read(CHUNK):
            pass
        await process.wait()
    return output, timed_out


def _prepare(code: str, workspace: str | None = None) -> str:
    """The run's directory on the host: the program's file, an empty mount point for the
    sandbox's root (the sandbox's own files live in memory, inside it), and for a shell run
    the visible files of its session's `workspace` (`visible_copy`)."""
    run = tempfile.mkdtemp(prefix=RUN_PREFIX)
    os.mkdir(os.path.join(run, "root"))
    os.mkdir(os.path.join(run, outputs.OUT), 0o700)
    with open(os.path.join(run, PROGRAM), "w", encoding="utf-8") as file:
        file.write(code)
    if workspace is not None:
        try:
            visible_copy(workspace, os.path.join(run, WORKSPACE))
        except BaseException:
            shutil.rmtree(run, ignore_errors=True)
            raise
    return run


def visible_copy(source: str, target: str, most: int | None = None) -> None:
    """The files of `source` a person could name, copied into `target`: no hidden file or
    folder (`.env`, `.git/`: a secret until shown otherwise), no link (it could lead out of
    the workspace), nothing but files and folders; SandboxError, before a byte is copied,
    when they add up to more than `most` bytes (a workspace past its quota)."""
    most = MAX_WORKSPACE if most is None else most
    room = [most]

    def left_out(folder: str, names: list[str]) -> set[str]:
        out = set()
        for name in names:
            path = os.path.join(folder, name)
            if name.startswith(".") or os.path.islink(path):
                out.add(name)
            elif os.path.isfile(path):
                room[0] -= os.path.getsize(path)
            elif not os.path.isdir(path):
                out.add(name)
        if room[0] < 0:
            raise SandboxError(
                f"the workspace holds more than {most // MB} MB, more than a run copies"
            )
        return out

    if not os.path.isdir(source) or os.path.islink(source):
        os.mkdir(target)
        return
    _walk_visible(source, left_out)  # counted first: nothing is copied past the bound
    room[0] = most
    shutil.copytree(source, target, symlinks=True, ignore=left_out)


def _walk_visible(source: str, left_out: Callable[[str, list[str]], set[str]]) -> None:
    """Visit the folders `copytree` would, with the same `left_out`, copying nothing."""
    for folder, folders, files in os.walk(source):
        kept = left_out(folder, folders + files)
        folders[:] = [name for name in folders if name not in kept]


async def run_program(
    code: str,
    limits: SandboxLimits,
    bound: Bound | None = None,
    *,
    shell: bool = False,
    workspace: str | None = None,
) -> Outcome:
    """Run `code` as `main.py` in a fresh sandbox (as a POSIX shell script, with a copy of
    `workspace`'s visible files, when `shell`) and say how it ended, with the files it left
    in `./out/` (at most `bound`: by default, what one run hands back)."""
    bound = bound or Bound()
    run = await asyncio.to_thread(_prepare, code, workspace if shell else None)
    python, prefix = interpreter()
    offered = await asyncio.to_thread(packages.offered)
    try:
        read_end, write_end = os.pipe()
        try:
            plan = RunPlan(
                limits,
                os.path.join(run, "root"),
                os.path.join(run, PROGRAM),
                python,
                prefix,
                write_end,
                out=os.path.join(run, outputs.OUT),
                out_files=bound.files,
                out_bytes=bound.bytes,
                site=packages.site_packages(prefix),
                packages=offered,
                shell=shell,
                workspace=os.path.join(run, WORKSPACE) if shell else "",
            )
            try:
                process = await _spawn(plan)
            finally:
                os.close(write_end)
            output, timed_out = await _watch(process, limits)
            status = _status(read_end)
        finally:
            os.close(read_end)
        out = await asyncio.to_thread(_taken, run, status, bound)
    finally:
        shutil.rmtree(run, ignore_errors=True)
    return _outcome(output, status, timed_out, out, bound)


def _taken(run: str, status: dict[str, Any], bound: Bound) -> tuple[list[OutFile], Leftovers]:
    """The files the init took out of ./out/, read within `bound`, and those left: the
    init's report of them, then those the worker did not read. Only a stage that reported
    the program's end had finished copying: a stage killed before has no files (a half
    copy is never sent). Run in a thread."""
    left = Leftovers()
    if "exit" not in status and "signal" not in status:
        return [], left
    files, past = outputs.read(os.path.join(run, outputs.OUT), bound)
    for name, size, why in status.get("unsent", []):
        left.add(str(name), int(size), "count" if why == "count" else "room")
    left.unlisted += int(status.get("more", 0))
    for unsent in past.listed:
        left.add(unsent.name, unsent.size, unsent.why)
    left.unlisted += past.unlisted
    return files, left


def _outcome(
    output: _Output,
    status: dict[str, Any],
    timed_out: bool,
    out: tuple[list[OutFile], Leftovers],
    bound: Bound,
) -> Outcome:
    if "error" in status:
        raise SandboxError(status["error"])
    if not status and not (timed_out or output.cut):
        last = output.text.strip().splitlines()[-1:] or ["no report"]
        raise SandboxError(f"the sandbox could not start: {last[0]}")
    return Outcome(
        output=output.text,
        exit_code=status.get("exit"),
        signal=status.get("signal"),
        cpu_seconds=status.get("cpu"),
        timed_out=timed_out or bool(status.get("timeout")),
        cut=output.cut,
        files=tuple(out[0]),
        bound=bound,
        unsent=tuple(out[1].listed),
        unlisted=out[1].unlisted,
    )
