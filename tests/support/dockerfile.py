"""The Dockerfile read as the tests need it: its stages by name, each a list of steps.

No Docker engine runs the tests, so what the image promises (its pinned bases, its user, what
its last stage installs) is checked on the file's steps, parsed here once for all of them."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
LAST = "image"  # the name given to the last stage, which is unnamed: the image that ships

Step = tuple[str, str]  # (instruction in capitals, its arguments)


def stages(path: Path = DOCKERFILE) -> dict[str, list[Step]]:
    """The stages by name (`image` for the last, unnamed one), each its steps, FROM first;
    lines continued with a backslash are joined, comments left out."""
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    found: dict[str, list[Step]] = {}
    steps: list[Step] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        instruction, _, args = line.strip().partition(" ")
        if instruction.upper() == "FROM":
            _, _, name = args.partition(" AS ")
            steps = found.setdefault(name.strip() or LAST, [])
        steps.append((instruction.upper(), " ".join(args.split())))
    return found


def base(steps: list[Step]) -> str:
    """The image a stage starts from (its FROM line without the stage's name)."""
    return steps[0][1].split(" AS ")[0].strip()
