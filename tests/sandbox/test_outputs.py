"""What a program hands back besides its output: the files it wrote in ./out/ (regular files
only, by name, ten at most, never through a link or what a process it left behind swapped in),
and the packages it may import: matplotlib and what it needs, and nothing else of the worker's
virtualenv."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from bot.sandbox.limits import SandboxLimits
from bot.sandbox.outputs import MAX_FILES
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
    assert outcome.left == 2
    assert f"2 more files in ./out/ were not sent: at most {MAX_FILES} are" in describe(
        outcome, limits
    )


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
