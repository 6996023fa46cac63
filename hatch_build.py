"""No wheel without the pages' browser libraries.

They are not kept in git (`make assets` installs them into adapters/http/static/vendor/, see
adapters/http/vendor.txt), so a wheel built before `make assets` would install a web process
whose pages cannot work. The build stops instead, in one line naming what is missing. An
editable install (`uv sync`) reads the checkout itself and is left alone.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

LIST = "adapters/http/vendor.txt"
VENDOR = "adapters/http/static/vendor"


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return
        root = Path(self.root)
        lines = (line.strip() for line in (root / LIST).read_text(encoding="utf-8").splitlines())
        names = [PurePosixPath(line).name for line in lines if line and not line.startswith("#")]
        missing = [name for name in names if not (root / VENDOR / name).is_file()]
        if missing:
            raise RuntimeError(
                f"{VENDOR} lacks {', '.join(missing)}: run `make assets` before building a wheel"
            )
