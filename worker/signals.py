"""How every long-running `parley` process learns it should stop."""

from __future__ import annotations

import asyncio
import signal


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGTERM or SIGINT on the running loop: the process then stops as
    cleanly as it can (hands sessions over, lets go of leases) instead of dying mid-step."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    return stopping
