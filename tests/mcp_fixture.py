"""An MCP server for the tests, written with the ``mcp`` SDK's MCPServer (FastMCP).

``python mcp_fixture.py stdio`` serves on stdin/stdout; ``python
mcp_fixture.py http`` serves streamable HTTP on 127.0.0.1, a free port, and
prints ``port=N`` once it listens. With ``MCP_FIXTURE_LOG`` set, it appends
one JSON line per thing worth checking (a call started, a call cancelled) to
that file.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
server = MCPServer("fixture")
LOG = os.environ.get("MCP_FIXTURE_LOG")
# The smallest valid PNG (1x1).
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def record(event: str, **fields: object) -> None:
    if LOG:
        line = json.dumps(
            {"event": event, "pid": os.getpid(), "t_ns": time.perf_counter_ns(), **fields}
        )
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(line + "\n")


@server.tool(annotations=READ_ONLY)
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool(annotations=READ_ONLY)
async def slow(seconds: float, tag: str) -> str:
    """Sleep, then answer; says so in the log if it is cancelled first."""
    record("slow.started", tag=tag)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        record("slow.cancelled", tag=tag)
        raise
    return f"slept {seconds} s"


@server.tool()
def crash() -> str:
    """Exit at once, without answering."""
    os._exit(3)


@server.tool(name="notes.write")
def write_note(text: str) -> str:
    """Append a line to notes.txt in the working directory (changes things)."""
    with open("notes.txt", "a", encoding="utf-8") as f:
        f.write(text + "\n")
    return f"wrote {len(text)} characters"


@server.tool(annotations=READ_ONLY)
def big(lines: int) -> str:
    """A long output: numbered lines."""
    return "\n".join(f"line {i:06d} of a long output" for i in range(lines))


@server.tool(annotations=READ_ONLY, structured_output=False)
def picture() -> list[object]:
    """A caption and an image."""
    return ["a red dot:", Image(data=PNG, format="png")]


@server.tool(annotations=READ_ONLY)
def fail(reason: str) -> str:
    """Fail with the reason (the result has isError set)."""
    raise ToolError(reason)


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool of that name, and say the tools changed."""
    server.add_tool(lambda: f"{name} grown", name=name, annotations=READ_ONLY)
    await ctx.notify_tools_changed()
    return f"added {name}"


def serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning")
    print(f"port={sock.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        serve_http()
    else:
        server.run()
