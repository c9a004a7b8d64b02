"""The MCP figures: what a tool call through an MCP server costs agentls, and
that configured MCP servers do not slow ``initialize``.

* Overhead: the fake model answers a tagged prompt with a call of
  ``mcp__probe__stamp``; the probe (``mcp_probe.py``) notes when the call
  reached it and when it answered. Model's call → MCP server: the fake
  finished sending the response that holds the call → the probe has it.
  MCP answer → next model request: the probe answered → the request carrying
  the output reaches the fake. The same probe called straight from the SDK's
  ``Client`` in this process is the floor (what any MCP client pays).
* Start-up: spawn → ``initialize`` result with three MCP servers configured,
  interleaved with runs without any.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.testing.fake_model import Reply
from bench.agentls_server import AgentlsServer
from bench.fakehub import tag

if TYPE_CHECKING:
    from bench.figures import Run

PROBE = Path(__file__).with_name("mcp_probe.py")  # not mcp*.py beside it: it would shadow the SDK
DIRECT = "mcp SDK Client, direct"
KIND = "mcp"
BASE = 700_000


def probe_entry(log: Path) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [str(PROBE)],
        "env": {"AGENTLS_BENCH_MCP_LOG": str(log)},
    }


def _stamps(log: Path) -> dict[int, dict[str, int]]:
    if not log.exists():
        return {}
    rows = (json.loads(line) for line in log.read_text().splitlines() if line.strip())
    return {row["n"]: row for row in rows}


async def _ready(session: AgentlsServer, names: list[str], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        result = await session.call("agent/mcpServers", {})
        status = {server["name"]: server["status"] for server in result["servers"]}
        if all(status.get(name) == "ready" for name in names):
            return
        if any(status.get(name) == "failed" for name in names) or time.monotonic() > deadline:
            raise RuntimeError(f"MCP servers not ready: {result}")
        await asyncio.sleep(0.05)


async def overhead(run: Run) -> None:
    """Model's call → MCP server, and MCP answer → next model request."""
    reps = run.sizes.first_delta_reps
    log = run.scratch / "mcp-probe.jsonl"
    run.hub.on(
        KIND,
        lambda n: Reply.tool_call("mcp__probe__stamp", {"n": n}, call_id=f"call_mcp_{n}"),
    )
    session = await AgentlsServer.start(
        run.hub.base_url,
        run.workspace(),
        run.stderr_file("agentls-mcp"),
        home=run.home,
        options={"mcpServers": {"probe": probe_entry(log)}},
    )
    to_server: list[float] = []
    to_model: list[float] = []
    try:
        await _ready(session, ["probe"])
        await session.run_turn(f"{tag('warm', 1)} warm up")
        for i in range(reps + 1):  # the first is a warm-up
            n = BASE + i
            before = run.hub.request_count
            await session.run_turn(f"{tag(KIND, n)} stamp it")
            call = run.hub.seen(KIND, n)
            follow = next(
                r
                for r in run.hub.requests_since(before)
                if r.input and r.input[-1].get("call_id") == f"call_mcp_{n}"
            )
            stamp = _stamps(log)[n]
            assert call is not None and call.t_done_ns is not None
            if i == 0:
                continue
            to_server.append((stamp["received_ns"] - call.t_done_ns) / 1e6)
            to_model.append((follow.t_arrival_ns - stamp["answered_ns"]) / 1e6)
    finally:
        await session.close()
    run.raw.setdefault("mcp", {})["to_server"] = to_server
    run.raw["mcp"]["to_model"] = to_model
    run.raw["mcp"]["direct"] = await _direct(run, reps)


async def _direct(run: Run, reps: int) -> dict[str, list[float]]:
    """The floor: the SDK's own client calling the probe, in this process."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    log = run.scratch / "mcp-probe-direct.jsonl"
    entry = probe_entry(log)
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"])
    to_server: list[float] = []
    back: list[float] = []
    async with Client(params) as client:
        for i in range(reps + 1):
            n = BASE + 50_000 + i
            t_call = time.perf_counter_ns()
            await client.call_tool("stamp", {"n": n})
            t_back = time.perf_counter_ns()
            stamp = _stamps(log)[n]
            if i:
                to_server.append((stamp["received_ns"] - t_call) / 1e6)
                back.append((t_back - stamp["answered_ns"]) / 1e6)
    return {"to_server": to_server, "back": back}


async def startup(run: Run) -> None:
    """spawn → initialize result, with and without three MCP servers, interleaved
    (which goes first alternates, so neither pays for what the other left behind)."""
    log = run.scratch / "mcp-startup.jsonl"
    servers = {f"probe{k}": probe_entry(log) for k in range(1, 4)}
    without: list[float] = []
    with_three: list[float] = []
    first_turn: dict[str, list[float]] = {"none": [], "three": []}
    for rep in range(run.sizes.startup_reps):
        runs = [("none", None, without), ("three", servers, with_three)]
        for key, configured, samples in runs if rep % 2 == 0 else runs[::-1]:
            session = await AgentlsServer.start(
                run.hub.base_url,
                run.workspace(),
                run.stderr_file("agentls-mcp-startup"),
                home=run.home,
                options=None if configured is None else {"mcpServers": configured},
            )
            samples.append((session.t_initialized_ns - session.client.t_spawn_ns) / 1e6)
            # A first turn at once: the servers (and the SDK's import) start meanwhile.
            n = BASE + 90_000 + 2 * rep + (key == "three")
            turn = await session.run_turn(f"{tag('ft', n)} first prompt")
            request = await run.hub.request("ft", n)
            first_turn[key].append((request.t_arrival_ns - turn.t_send_ns) / 1e6)
            if configured is not None:
                await _ready(session, list(configured))
            await session.close()
    run.raw.setdefault("mcp", {})["startup"] = {
        "none": without,
        "three": with_three,
        "first_turn": first_turn,
    }
