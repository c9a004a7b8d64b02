"""The MCP server of the MCP figures: one tool, ``stamp``, that notes when the
call reached it and when it answered (``time.perf_counter_ns()``, CLOCK_MONOTONIC:
comparable with the fake model's and the driver's clocks), one JSON line per
call in ``$AGENTLS_BENCH_MCP_LOG``. Written with the ``mcp`` SDK (MCPServer);
its own dispatch is inside both figures, as any MCP server's would be."""

from __future__ import annotations

import json
import os
import time

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("probe")
LOG = os.environ.get("AGENTLS_BENCH_MCP_LOG")
_log = open(LOG, "a", encoding="utf-8", buffering=1) if LOG else None  # noqa: SIM115


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def stamp(n: int) -> str:
    """Answer at once, noting when the call arrived and when it was answered."""
    received = time.perf_counter_ns()
    if _log is not None:
        answered = time.perf_counter_ns()
        _log.write(json.dumps({"n": n, "received_ns": received, "answered_ns": answered}) + "\n")
    return f"stamped {n}"


if __name__ == "__main__":
    server.run()
