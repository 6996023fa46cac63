"""What a hostile program tries, and what it gets: nothing of the host's, no network."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import bot
from bot.sandbox.limits import SandboxLimits
from bot.sandbox.runner import RUN_PREFIX, run_program
from tests.support.waiting import until

pytestmark = pytest.mark.e2e
SECRET = "parley-secret-7f3a9c"
REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGE = Path(bot.__file__).resolve().parent  # where Parley is installed
HOST_FONTS = os.path.isdir("/etc/fonts")


async def run_probes(limits: SandboxLimits, probes: dict[str, str]) -> dict[str, str]:
    """Run each expression inside the sandbox; its repr, or the exception's class name."""
    lines = ["import json, os, socket, signal", "results = {}"]
    for name, expression in probes.items():
        lines += [
            "try:",
            f"    results[{name!r}] = repr({expression})[:300]",
            "except Exception as exc:",
            f"    results[{name!r}] = type(exc).__name__",
        ]
    lines.append("print(json.dumps(results))")
    outcome = await run_program("\n".join(lines) + "\n", limits)
    assert outcome.exit_code == 0, outcome.output
    found: dict[str, str] = json.loads(outcome.output.splitlines()[-1])
    return found


@pytest.fixture
def secret_file(monkeypatch: pytest.MonkeyPatch) -> Path:
    """A secret in the worker's environment, and in a file the worker can read."""
    monkeypatch.setenv("PARLEY_TELEGRAM_TOKEN", SECRET)
    folder = Path(tempfile.mkdtemp(prefix="parley-test-"))
    secret = folder / ".env"
    secret.write_text(f"PARLEY_TELEGRAM_TOKEN={SECRET}\n")
    return secret


async def test_the_worker_environment_and_files_are_out_of_reach(
    limits: SandboxLimits, secret_file: Path
) -> None:
    assert os.environ["PARLEY_TELEGRAM_TOKEN"] == SECRET
    results = await run_probes(
        limits,
        {
            "environ": "dict(os.environ)",
            "ppid": "os.getppid()",
            "parent_environ": "open(f'/proc/{os.getppid()}/environ', 'rb').read()",
            "init_environ": "open('/proc/1/environ', 'rb').read()",
            "all_environ": (
                "[open(f'/proc/{p}/environ', 'rb').read() for p in os.listdir('/proc') "
                "if p.isdigit()]"
            ),
            "secret_file": f"open({str(secret_file)!r}).read()",
            "repository": f"os.listdir({str(REPOSITORY)!r})",
            "config": f"open({str(REPOSITORY / 'bot' / 'config.py')!r}).read()",
            "root": "os.listdir('/root')",
            "etc": "os.listdir('/etc')",
            "home": "os.listdir('/home')",
            "uid": "(os.getuid(), os.geteuid(), os.getgid())",
        },
    )
    assert SECRET not in json.dumps(results)
    assert json.loads(results["environ"].replace("'", '"')) == {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/scratch",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "XDG_CACHE_HOME": "/tmp/cache",
        "OPENBLAS_NUM_THREADS": "1",
    }
    assert results["ppid"] == "1"  # the sandbox's own first process, not the worker
    assert results["parent_environ"] == "PermissionError"
    assert results["init_environ"] == "PermissionError"
    assert results["secret_file"] == "FileNotFoundError"
    assert results["repository"] == "FileNotFoundError"
    assert results["config"] == "FileNotFoundError"
    assert results["home"] == "FileNotFoundError"
    fonts = ["fonts"] if HOST_FONTS else []  # fontconfig's, read-only
    assert sorted(ast.literal_eval(results["etc"])) == [*fonts, "group", "ld.so.cache", "passwd"]
    assert results["uid"] == "(1000, 1000, 1000)"
    assert "parley" not in results["root"] and ".env" not in results["root"]


# Reads what every process the program can see shows of itself: its command line and
# environment, and its threads'. A child is running meanwhile, so there is more than one.
EVERY_PROCESS = """\
import json, os, subprocess, sys
child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
seen = {}
for pid in os.listdir('/proc'):
    if not pid.isdigit():
        continue
    for task in ['', *(f'task/{t}/' for t in os.listdir(f'/proc/{pid}/task'))]:
        for name in ('cmdline', 'environ'):
            path = f'/proc/{pid}/{task}{name}'
            try:
                seen[path] = open(path, 'rb').read().decode('utf-8', 'replace')
            except OSError as exc:
                seen[path] = type(exc).__name__
child.kill()
print(json.dumps(seen))
"""


async def test_no_process_inside_shows_the_hosts_paths_or_the_stages_arguments(
    limits: SandboxLimits,
) -> None:
    """The sandbox's first process is a fork of the stage the worker started: what it was
    started with must say nothing of the host (Parley's installation, the run's folder on
    the host, its plan)."""
    outcome = await run_program(EVERY_PROCESS, limits)
    assert outcome.exit_code == 0, outcome.output
    seen: dict[str, str] = json.loads(outcome.output.splitlines()[-1])
    installed = {str(REPOSITORY), str(PACKAGE)}
    if sys.prefix != sys.base_prefix:  # a virtualenv: Parley's, not the interpreter's
        installed.add(sys.prefix)
    stage = [RUN_PREFIX, "bot.sandbox", "status_fd", "cpu_seconds"]
    leaks = {
        path: text
        for path, text in seen.items()
        if any(part in text for part in [*installed, *stage])
    }
    assert leaks == {}
    assert seen["/proc/1/cmdline"] not in ("", "PermissionError")  # it was read
    assert len({path.split("/")[2] for path in seen}) == 3  # init, the program, its child


async def test_no_privilege_can_be_gained(limits: SandboxLimits) -> None:
    results = await run_probes(
        limits,
        {
            "status": "[l for l in open('/proc/self/status') if l.startswith(('Cap', 'NoNew'))]",
            "kill_init": "os.kill(1, signal.SIGKILL)",
            "setuid": "os.setuid(0)",
            "unshare": "os.system('unshare --user --map-root-user true') and 'refused'",
            "mount": "os.system('mount -t tmpfs none /tmp 2>/dev/null') and 'refused'",
            "ptrace": "__import__('ctypes').CDLL(None).ptrace(16, 1, 0, 0)",
        },
    )
    assert "CapEff:\\t0000000000000000" in results["status"]
    assert "CapBnd:\\t0000000000000000" in results["status"]
    assert "NoNewPrivs:\\t1" in results["status"]
    assert results["kill_init"] == "PermissionError"
    assert results["setuid"] == "PermissionError"
    assert results["unshare"] == "'refused'"
    assert results["mount"] == "'refused'"
    assert results["ptrace"] == "-1"


async def test_writing_outside_the_scratch_directory_is_refused(limits: SandboxLimits) -> None:
    results = await run_probes(
        limits,
        {
            "cwd": "(os.getcwd(), os.path.expanduser('~'))",
            "scratch": "open('note.txt', 'w').write('kept here')",
            "root": "open('/escape.txt', 'w')",
            "usr": "open('/usr/lib/escape.txt', 'w')",
            "python": "open(os.__file__, 'a')",
            "parent": "open('../escape.txt', 'w')",
            "devices": "os.listdir('/dev')",
        },
    )
    assert results["cwd"] == "('/scratch', '/scratch')"
    assert results["scratch"] == "9"
    for name in ("root", "usr", "python", "parent"):  # read-only, or not the sandbox's
        assert results[name] in ("OSError", "PermissionError"), (name, results[name])
    assert "vda" not in results["devices"] and "null" in results["devices"]


def _run_directories(folder: Path) -> list[Path]:
    return list(folder.glob(RUN_PREFIX + "*"))


async def test_each_run_starts_empty_and_leaves_nothing(
    limits: SandboxLimits, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where runs make their folder
    first = await run_program("open('left.txt', 'w').write('x')\nprint(os.listdir('.'))", limits)
    assert "NameError" in first.output  # no `os` imported: a program error, reported
    first = await run_program(
        "import os\nopen('left.txt', 'w').write('x')\nprint(sorted(os.listdir('.')))", limits
    )
    assert first.output == "['left.txt', 'main.py', 'out']\n"
    second = await run_program("import os\nprint(sorted(os.listdir('.')))", limits)
    assert second.output == "['main.py', 'out']\n"
    assert _run_directories(tmp_path) == []
    # while a run lasts its folder is there, so the line above could have failed
    running = asyncio.create_task(run_program("import time\ntime.sleep(2)\n", limits))
    await until(lambda: _run_directories(tmp_path), "the run's folder", every=0.01)
    assert (await running).exit_code == 0
    assert _run_directories(tmp_path) == []


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it gets."""

    def __init__(self) -> None:
        self.connections = 0
        self.first = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.first.set()
        writer.close()


@pytest.fixture
async def listener() -> AsyncIterator[tuple[Listener, int]]:
    counter = Listener()
    server = await asyncio.start_server(counter.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield counter, port


async def test_there_is_no_network(limits: SandboxLimits, listener: tuple[Listener, int]) -> None:
    counter, port = listener
    # the server answers from here, so a connection from the sandbox would be counted
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.close()
    await writer.wait_closed()
    async with asyncio.timeout(30):
        await counter.first.wait()
    results = await run_probes(
        limits,
        {
            "tcp": f"socket.create_connection(('127.0.0.1', {port}), timeout=5)",
            "tcp6": f"socket.create_connection(('::1', {port}), timeout=5)",
            "udp": "socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
            "raw": "socket.socket(socket.AF_PACKET, socket.SOCK_RAW)",
            "netlink": "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)",
            "dns": "socket.getaddrinfo('example.com', 443)",
            "unix": "socket.socketpair()[0].family.name",
        },
    )
    for name in ("tcp", "tcp6", "udp", "raw", "netlink"):
        assert results[name] in ("OSError", "PermissionError"), (name, results[name])
    assert results["dns"] == "gaierror"
    assert results["unix"] == "'AF_UNIX'"  # local pipes between its own processes still work
    await asyncio.sleep(0)
    assert counter.connections == 1
