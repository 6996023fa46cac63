"""`python -m worker`: the `parley` command, for an install without its script on PATH."""

from worker.cli import app

app()
