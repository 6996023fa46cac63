"""A small MCP server for the tests, built with the SDK: `python toolbox.py [stdio |
http PORT | sse PORT]`. Its tools echo, wait, crash the process, show its environment or the
request's headers, return an image, and add a tool at run time (announcing the change)."""

from __future__ import annotations

import base64
import os
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("toolbox")


@server.tool()
def echo(text: str) -> str:
    """Say `text` back."""
    return text


@server.tool()
async def wait(seconds: float, started: str = "") -> str:
    """Wait, then say so; first create the file `started`, if given."""
    if started:
        await anyio.Path(started).touch()
    await anyio.sleep(seconds)
    return f"waited {seconds:g} s"


@server.tool()
def crash() -> str:
    """End this server's process in the middle of the call."""
    print("toolbox: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def environment() -> dict[str, Any]:
    """This process's id and environment variables."""
    return {"pid": os.getpid(), "variables": dict(os.environ)}


@server.tool()
def headers(ctx: Context) -> dict[str, str]:
    """The HTTP headers of this call's request (none over stdio)."""
    return dict(ctx.headers or {})


@server.tool()
def picture() -> list[Any]:
    """A caption and a tiny PNG."""
    from mcp_types import ImageContent, TextContent

    data = base64.b64encode(b"\x89PNG" + bytes(2044)).decode()
    return [TextContent(text="a picture"), ImageContent(data=data, mime_type="image/png")]


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `added`, and tell the client that the tools changed."""
    server.add_tool(lambda: "I was added", name="added", description="Added at run time.")
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    if len(sys.argv) > 2:
        kind = "streamable-http" if sys.argv[1] == "http" else "sse"
        server.run(kind, host="127.0.0.1", port=int(sys.argv[2]))  # type: ignore[call-overload]
    else:
        server.run()
