"""What a program hands back besides its output: the files it wrote in ./out/ (regular files
only, by name, ten at most, never through a link or what a process it left behind swapped in),
and the packages it may import: matplotlib and what it needs, and nothing else of the worker's
virtualenv."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from bot.sandbox.limits import SCRATCH_MB, SandboxLimits
from bot.sandbox.outputs import MAX_FILES, Bound
from bot.sandbox.report import describe
from bot.sandbox.runner import run_program
from tests.support.programs import PLOT

pytestmark = pytest.mark.e2e


async def test_a_chart_drawn_with_matplotlib_comes_back_as_a_png(limits: SandboxLimits) -> None:
    outcome = await run_program(PLOT, limits)
    assert (outcome.exit_code, outcome.output) == (0, "drawn\n")
    [chart] = outcome.files
    assert chart.name == "chart.png"
    with Image.open(io.BytesIO(chart.data)) as image:
        assert image.format == "PNG" and image.size == (640, 480)


async def test_out_is_there_empty_when_the_program_starts(limits: SandboxLimits) -> None:
    """The first thing anyone writes: a file straight into ./out/, no folder made first."""
    program = """\
import os
print(sorted(os.listdir("out")), oct(os.stat("out").st_mode & 0o777))
with open("out/x.csv", "w") as file:
    file.write("a,b\\n1,2\\n")
"""
    outcome = await run_program(program, limits)
    assert (outcome.exit_code, outcome.output) == (0, "[] 0o700\n"), outcome.output
    assert [(f.name, f.data) for f in outcome.files] == [("x.csv", b"a,b\n1,2\n")]


async def test_only_regular_files_of_out_come_back_ten_at_most(limits: SandboxLimits) -> None:
    program = f"""\
import os, subprocess, sys
os.makedirs("out/folder")
for n in range({MAX_FILES + 2}):
    open(f"out/{{n:02}}.txt", "w").write(str(n))
open("out/.hidden", "w").write("h")
os.symlink("/etc/passwd", "out/00-link")
os.mkfifo("out/00-fifo")
# a process left behind that would swap a file for a link once the program ended
subprocess.Popen([sys.executable, "-c", "import os, time; time.sleep(0.3); "
                  "os.remove('out/00.txt'); os.symlink('/etc/passwd', 'out/00.txt')"])
"""
    outcome = await run_program(program, limits)
    assert outcome.exit_code == 0, outcome.output
    assert [(f.name, f.data) for f in outcome.files] == [
        (f"{n:02}.txt", str(n).encode()) for n in range(MAX_FILES)
    ]
    assert [(u.name, u.why) for u in outcome.unsent] == [("10.txt", "count"), ("11.txt", "count")]
    assert (
        f"2 more files in ./out/ were not sent: at most {MAX_FILES} are (10.txt, 11.txt)"
        in describe(outcome, limits)
    )


async def test_sparse_files_are_sent_only_within_the_scratch_size_counted_in_real_bytes(
    limits: SandboxLimits,
) -> None:
    """Ten sparse files of 37 to 46 MB take no room in the working directory, yet each is
    that many bytes once read: what is taken out stops at the 64 MB of the scratch."""
    program = """\
for n in range(10):
    with open(f"out/{n}.bin", "wb") as file:
        file.truncate((37 + n) * 1_000_000)
"""
    outcome = await run_program(program, limits)
    assert outcome.exit_code == 0, outcome.output
    assert [(f.name, len(f.data)) for f in outcome.files] == [("0.bin", 37_000_000)]
    assert outcome.files[0].data.count(0) == 37_000_000
    assert [(u.name, u.size, u.why) for u in outcome.unsent] == [
        (f"{n}.bin", (37 + n) * 1_000_000, "room") for n in range(1, 10)
    ]
    told = describe(outcome, limits)
    assert (
        f"not sent, past the {SCRATCH_MB} MB the files of ./out/ may add up to in one turn "
        "(64.0 MB were left for this run): 1.bin (36.2 MB), 2.bin (37.2 MB), "
    ) in told


async def test_a_file_linked_under_many_names_is_counted_for_each(limits: SandboxLimits) -> None:
    """Each name is copied and sent on its own, so each counts: one 60 MB file with nine
    more hard links is sent once, and its other names are not."""
    program = """\
import os
with open("out/a.bin", "wb") as file:
    file.truncate(60_000_000)
for n in range(9):
    os.link("out/a.bin", f"out/link{n}.bin")
"""
    outcome = await run_program(program, limits)
    assert outcome.exit_code == 0, outcome.output
    assert [(f.name, len(f.data)) for f in outcome.files] == [("a.bin", 60_000_000)]
    assert [(u.name, u.why) for u in outcome.unsent] == [(f"link{n}.bin", "room") for n in range(9)]


async def test_a_smaller_bound_for_what_is_left_of_the_turn(limits: SandboxLimits) -> None:
    """A run handed only part of the turn's room (its earlier runs sent files) takes no more."""
    program = """\
for name, length in (("a.txt", 600), ("b.txt", 500), ("c.txt", 300), ("d.txt", 1)):
    open(f"out/{name}", "wb").write(b"x" * length)
"""
    outcome = await run_program(program, limits, Bound(files=2, bytes=1000))
    assert [(f.name, len(f.data)) for f in outcome.files] == [("a.txt", 600), ("c.txt", 300)]
    assert [(u.name, u.why) for u in outcome.unsent] == [("b.txt", "room"), ("d.txt", "count")]
    told = describe(outcome, limits)
    assert "1 more file in ./out/ was not sent: this turn may send 2 more (d.txt)" in told
    assert "(1000 bytes were left for this run): b.txt (500 bytes)" in told


async def test_no_package_of_the_worker_but_the_offered_ones_can_be_imported(
    limits: SandboxLimits,
) -> None:
    program = """\
import importlib
for name in ("numpy", "matplotlib", "PIL", "pydantic", "redis", "aiogram", "bot", "anthropic"):
    try:
        importlib.import_module(name)
        print(name, "yes")
    except ImportError:
        print(name, "no")
import os, site, matplotlib, numpy
print(matplotlib.get_backend())
for folder in (os.path.dirname(numpy.__file__), site.getsitepackages()[0]):
    print(bool(os.statvfs(folder).f_flag & os.ST_RDONLY))
"""
    outcome = await run_program(program, limits)
    assert outcome.output.split("\n") == [
        "numpy yes", "matplotlib yes", "PIL yes", "pydantic no", "redis no", "aiogram no",
        "bot no", "anthropic no", "Agg", "True", "True", "",
    ]  # fmt: skip
