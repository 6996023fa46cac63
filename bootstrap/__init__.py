"""The persona's default bootstrap files (`SOUL.md`, `USER.md`, `AGENTS.md`): data, not code.

A package of its own so that one lookup (`importlib.resources.files("bootstrap")`) finds the
files in a checkout, the Docker image and an installed wheel alike; the wheel ships it beside
`bot`, `adapters` and `worker`.
"""
