"""A forked `python -m MODULE` is the process an executed one would be: the same output, its
environment, folder and path, its streams and no other descriptor, its signals and exit
status; and it refuses to stand in for another copy of Parley."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.parley import PIPE, ROOT, STDOUT, run_parley, start_parley

pytestmark = pytest.mark.e2e

PROBE = """
import json, os, signal, sys
json.dump({
    "env": dict(os.environ),
    "cwd": os.getcwd(),
    "path": sys.path[:3],
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "sigterm": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
    "sigint": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
    "argv": sys.argv[1:],
    "main": __name__,
    "sid": os.getsid(0) == os.getpid(),
    "stdin": sys.stdin.read(),
}, sys.stdout)
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


async def test_a_forked_module_runs_as_python_m_would_run_it(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    extra = tmp_path / "extra"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(extra), "ONLY": "this"}
    proc = await start_parley(
        "3", "more", env=env, cwd=tmp_path, stdin=PIPE, stdout=PIPE, stderr=PIPE,
        start_new_session=True, module="probe",
    )  # fmt: skip
    out, err = await proc.communicate(b"fed")
    seen = json.loads(out)
    assert (proc.returncode, err) == (3, b"to stderr\n")
    assert seen["env"] == env  # nothing of the tests' environment
    assert seen["cwd"] == str(tmp_path)  # pytest's tmp_path is resolved already
    assert seen["path"][:2] == [str(tmp_path), str(extra)]
    # the three streams, and the one descriptor listing /proc/self/fd
    assert len(seen["fds"]) == 4 and seen["fds"][:3] == [0, 1, 2], seen["fds"]
    assert seen["sigterm"] and seen["sigint"] and seen["sid"]
    assert (seen["argv"], seen["main"], seen["stdin"]) == (["3", "more"], "__main__", "fed")


async def test_signals_reach_it_and_its_status_says_which(tmp_path: Path) -> None:
    (tmp_path / "waits.py").write_text("import time\nprint('up', flush=True)\ntime.sleep(60)\n")
    env = {"PATH": "/usr/bin:/bin"}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc = await start_parley(env=env, cwd=tmp_path, stdout=PIPE, module="waits")
        assert proc.stdout is not None
        assert await proc.stdout.readline() == b"up\n"
        assert proc.returncode is None
        proc.send_signal(sig)
        assert await asyncio.wait_for(proc.wait(), 30) == -sig
        with pytest.raises(ProcessLookupError):  # as asyncio's process says of an ended one
            proc.kill()


def test_parley_says_the_same_forked_and_executed(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    forked = run_parley("--help", env=env, cwd=tmp_path)
    executed = subprocess.run(
        [sys.executable, "-m", "worker", "--help"],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "Usage: python -m worker" in forked.stdout
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        executed.returncode, executed.stdout, executed.stderr,
    )  # fmt: skip


async def test_another_copy_of_parley_is_not_stood_in_for(tmp_path: Path) -> None:
    (tmp_path / "worker").mkdir()
    with pytest.raises(ValueError, match="another copy of Parley"):
        await start_parley("worker", env={}, cwd=tmp_path)
    with pytest.raises(ValueError, match="another copy of Parley"):
        await start_parley("worker", env={"PYTHONPATH": str(tmp_path)}, cwd=ROOT)


async def test_stderr_can_join_stdout_and_stdin_can_be_nothing(tmp_path: Path) -> None:
    (tmp_path / "both.py").write_text(
        "import sys\nprint(repr(sys.stdin.read()))\nprint('err', file=sys.stderr)\n"
    )
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        proc = await start_parley(
            env={}, cwd=tmp_path, stdin=devnull, stdout=PIPE, stderr=STDOUT, module="both"
        )
    finally:
        os.close(devnull)
    out, err = await proc.communicate()
    # stdout into a pipe is flushed at the end, stderr by line: as in an executed Python
    assert (await proc.wait(), out, err) == (0, b"err\n''\n", b"")
