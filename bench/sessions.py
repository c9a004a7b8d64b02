"""The session store's costs (issue 14), measured side by side in one run:

- the 20,000-delta flood on two servers, sessions saved and not
  (``sessionRetention: 0``), turn by turn in alternation, so that both see
  the same machine;
- ``agent/resume`` of a session of 10,000 items, round trip;
- ``agent/sessions`` with 200 sessions stored, round trip;
- the journal writes of one committed step (model response with a tool call,
  its output, the commit), in-process on this machine's disk: what the agent
  waits for, and how long until the flusher has fsynced it.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import procs
from bench.agentls_server import AgentlsServer
from bench.fakehub import tag

if TYPE_CHECKING:
    from bench.figures import Run

BASE = 700_000  # repetition numbers of this figure's requests
STORE_ON, STORE_OFF = "on", "off"


async def measure(run: Run) -> None:
    raw: dict[str, Any] = {}
    await _flood(run, raw)
    await _resume_and_list(run, raw)
    steps = await asyncio.to_thread(step_writes, run.scratch, run.sizes.step_reps)
    raw["step_ms"], raw["durable_ms"] = steps["write"], steps["durable"]
    run.raw["sessions"] = raw


async def _flood(run: Run, raw: dict[str, Any]) -> None:
    servers = {
        STORE_ON: await AgentlsServer.start(
            run.hub.base_url, run.workspace(), run.stderr_file("sessions-on"), home=run.home
        ),
        STORE_OFF: await AgentlsServer.start(
            run.hub.base_url,
            run.workspace(),
            run.stderr_file("sessions-off"),
            home=run.home,
            options={"sessionRetention": 0},
        ),
    }
    rows: dict[str, list[dict[str, Any]]] = {STORE_ON: [], STORE_OFF: []}
    n = BASE
    try:
        for server in servers.values():
            n += 1
            await server.run_turn(f"{tag('warm', n)} warm up")
        for rep in range(run.sizes.sessions_reps):
            # Alternate which goes first: neither always follows the other.
            order = (STORE_ON, STORE_OFF) if rep % 2 == 0 else (STORE_OFF, STORE_ON)
            for who in order:
                n += 1
                rows[who].append(await _flood_turn(run, servers[who], n))
    finally:
        for server in servers.values():
            await server.close()
    raw["flood"] = rows


def cpu_seconds(pid: int) -> float:
    """CPU time of a process's threads to the nanosecond (``schedstat``), where
    ``/proc/PID/stat`` counts 10 ms ticks: too coarse to see 5% of 40 ms.
    Threads that ended are not counted; the server's keep running."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9 if total else procs.cpu_seconds(pid)


async def _flood_turn(run: Run, server: AgentlsServer, n: int) -> dict[str, Any]:
    cpu0 = cpu_seconds(server.pid)
    turn = await server.run_turn(f"{tag('tp', n)} stream fast", timeout=120)
    cpu1 = cpu_seconds(server.pid)
    request = run.hub.seen("tp", n)
    assert request is not None and turn.result is not None
    return {
        "wall_s": (turn.t_result_ns - request.t_arrival_ns) / 1e9,
        "cpu_s": cpu1 - cpu0,
        "text_ok": turn.text == run.throughput_text,
    }


async def _resume_and_list(run: Run, raw: dict[str, Any]) -> None:
    sizes = run.sizes
    server = await AgentlsServer.start(
        run.hub.base_url, run.workspace(), run.stderr_file("sessions-store"), home=run.home
    )
    try:
        n = BASE + 50_000
        await server.run_turn(f"{tag('big', sizes.resume_items)} long answer", timeout=120)
        stored = await server.call("agent/sessions", {})
        (big,) = stored["sessions"]
        await server.call("agent/newSession", {})
        resume: list[float] = []
        for _ in range(sizes.resume_reps):
            t0 = time.perf_counter_ns()
            result = await server.call("agent/resume", {"sessionId": big["sessionId"]})
            resume.append((time.perf_counter_ns() - t0) / 1e6)
            assert result["turns"] == 1
            await server.call("agent/newSession", {})
        raw["resume_ms"] = resume
        raw["resume_items"] = sizes.resume_items + 1  # and the prompt
        # The other sessions, one short turn each, as a user makes them.
        for i in range(sizes.list_sessions - 1):
            n += 1
            await server.run_turn(f"{tag('ft', n)} session {i}")
            await server.call("agent/newSession", {})
        listing: list[float] = []
        for _ in range(sizes.list_reps):
            t0 = time.perf_counter_ns()
            listed = await server.call("agent/sessions", {})
            listing.append((time.perf_counter_ns() - t0) / 1e6)
        raw["list_ms"] = listing
        raw["listed"] = len(listed["sessions"])
    finally:
        await server.close()


def step_writes(scratch: Path, reps: int) -> dict[str, list[float]]:
    """Per committed step — the model's response (reasoning and a tool call),
    the tool's output (2 KB), the commit — the milliseconds the agent waits
    for the journal (``write``), and until all of it is fsynced (``durable``,
    on the flusher's thread)."""
    from agentls.agent.history import History
    from agentls.agent.settings import Settings
    from agentls.model.items import call_output
    from agentls.sessions.store import SessionStore

    folder = scratch / "step-writes"
    store = SessionStore(folder, workspace=scratch, model="gpt-fake")
    recorder = store.recorder()
    history = History()
    history.listener = recorder
    recorder.attach(history, Settings())
    recorder.turn_started(1, "measure the writes")
    writer = recorder.writer
    assert writer is not None
    write: list[float] = []
    durable: list[float] = []
    for i in range(reps):
        call = {
            "type": "function_call",
            "call_id": f"call_{i}",
            "name": "exec_command",
            "arguments": json.dumps({"cmd": f"pytest -q tests/test_{i}.py"}),
        }
        reasoning = {"type": "reasoning", "summary": [], "encrypted_content": "x" * 600}
        output = call_output("function_call", f"call_{i}", f"line {i}\n" * 256)
        t0 = time.perf_counter_ns()
        recorder.step_started([reasoning, call])
        recorder.tool_answered(output)
        history.commit([reasoning, call, output])
        t1 = time.perf_counter_ns()
        assert writer.wait_durable(30)
        t2 = time.perf_counter_ns()
        write.append((t1 - t0) / 1e6)
        durable.append((t2 - t0) / 1e6)
    recorder.close()
    return {"write": write, "durable": durable}
