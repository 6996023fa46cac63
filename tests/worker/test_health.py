"""The signal files `parley health worker|scheduler` reads: a live process whose signal ran
out is named, a dead process's file is dropped, a fresh one holds, and a clean stop removes
its own file."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from worker.health import Signal, check_role, keep


def test_a_fresh_signal_of_a_live_process_holds(tmp_path: Path) -> None:
    Signal("worker", tmp_path).write(10)
    assert check_role("worker", tmp_path) is None
    assert check_role("scheduler", tmp_path) == (
        f"no scheduler process is running here (no signal in {tmp_path})"
    )


def test_a_live_process_whose_signal_ran_out_is_named(tmp_path: Path) -> None:
    signal = Signal("worker", tmp_path)
    signal.write(10)
    problem = check_role("worker", tmp_path, now=time.time() + 25)
    assert problem is not None and f"worker {signal.pid} is not beating" in problem
    assert "ran out 15 s ago" in problem


def test_a_dead_process_file_is_dropped(tmp_path: Path) -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, check=True, text=True)  # fmt: skip
    dead = Signal("worker", tmp_path, pid=int(ended.stdout))
    dead.write(10)
    assert check_role("worker", tmp_path) is not None
    assert not dead.path.exists()


def test_another_hosts_signal_is_not_taken_for_a_process_here(tmp_path: Path) -> None:
    """Its pid is alive here (it is this test's), but on host-b it named another process."""
    theirs = Signal("worker", tmp_path)
    theirs.write(10)
    held = json.loads(theirs.path.read_text())
    assert held["host"] == socket.gethostname()
    theirs.path.write_text(json.dumps(held | {"host": "host-b"}))
    assert check_role("worker", tmp_path) == (
        f"no worker process is running here (no signal in {tmp_path})"
    )
    assert theirs.path.exists()  # not this host's to remove


def test_a_half_written_file_is_not_read_as_a_process(tmp_path: Path) -> None:
    (tmp_path / "worker-1.json").write_text('{"pid": 1, "unt')
    Signal("worker", tmp_path).write(10)
    assert check_role("worker", tmp_path) is None
    assert json.loads(Signal("worker", tmp_path).path.read_text())["for"] == 10


def test_each_beat_touches_the_file_and_holds_it_again(tmp_path: Path) -> None:
    signal = Signal("worker", tmp_path)
    signal.write(10)
    written = signal.path.stat().st_ino
    long_ago = time.time() - 30
    os.utime(signal.path, (long_ago, long_ago))  # as if its process had not beaten since
    problem = check_role("worker", tmp_path)
    assert problem is not None and "ran out 20 s ago" in problem
    signal.write(10)
    assert check_role("worker", tmp_path) is None
    assert signal.path.stat().st_ino == written  # touched, not written again
    signal.path.unlink()  # say, by a cleaner of the temporary folder
    signal.write(10)
    assert check_role("worker", tmp_path) is None


async def test_keep_writes_only_while_it_holds_and_removes_on_stop(tmp_path: Path) -> None:
    signal = Signal("worker", tmp_path)
    beating = [False]
    task = asyncio.create_task(keep(signal, 0.01, lambda: beating[0]))
    await asyncio.sleep(0.1)
    written_while_not_beating = signal.path.exists()
    beating[0] = True
    for _ in range(500):
        if signal.path.exists():
            break
        await asyncio.sleep(0.01)
    written = signal.path.exists()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert not written_while_not_beating and written
    assert not signal.path.exists()
