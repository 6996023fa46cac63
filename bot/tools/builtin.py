"""The tools every Parley agent has.

`current_time` is cheap and never blocks, so it runs on the worker's loop. The calculator runs
in a helper process: its bounds keep every expression it accepts fast, and the process makes
sure an expression they missed costs a killed helper, never a stalled worker. `validate_json`
checks JSON against a schema, in a helper process too (`bot.tools.validate_json`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from bot.config.zones import known_zone
from bot.tools import Tool, ToolContext, ToolError, tool
from bot.tools.calculator import CalculatorError, evaluate, render
from bot.tools.validate_json import validate_json


@tool(read_only=True, isolation="loop")
async def current_time(
    ctx: ToolContext,
    timezone: Annotated[
        str | None,
        Field(description="IANA time zone such as Europe/Berlin; the user's zone if omitted"),
    ] = None,
) -> str:
    """The current date and time in a time zone, with its UTC offset and weekday."""
    if timezone is None:
        zone = ctx.timezone
    else:
        try:
            zone = known_zone(timezone)
        except ValueError:
            raise ToolError(
                f"Unknown time zone {timezone!r}; use an IANA name such as America/New_York."
            ) from None
    now = datetime.now(zone)
    return now.strftime(f"%Y-%m-%d %H:%M:%S %Z (UTC%z), %A, time zone {zone.key}")


@tool(read_only=True, isolation="process")
def calculator(
    ctx: ToolContext,
    expression: Annotated[
        str,
        Field(description="Arithmetic such as (2+3)*sqrt(16)/7 or 2^10; math functions allowed"),
    ],
) -> str:
    """Evaluate an arithmetic expression exactly; use it instead of doing maths in your head."""
    try:
        return render(evaluate(expression))
    except CalculatorError as exc:
        raise ToolError(f"Cannot evaluate {expression!r}: {exc}") from None


def builtin_tools() -> list[Tool]:
    return [current_time, calculator, validate_json]
