"""agentls's figures on long sessions: first delta and submit → model request,
stream throughput, cancel, load, and ``agent/fork`` over the wire (with the
long conversations' submit and compaction).

With ``--baseline REV`` a second server — that revision's code — runs beside
this checkout's, and the figures that a change of the event path could move
(first delta, submit, throughput, cancel) alternate between the two rep by
rep: before and after side by side, under the same load.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import time
from typing import TYPE_CHECKING, Any

from agentls.testing.fake_model import estimate_input_tokens
from bench import procs
from bench.agentls_server import AgentlsServer
from bench.fakehub import tag
from bench.results import BEFORE, OURS

if TYPE_CHECKING:
    from bench.figures import Run

Contestants = list[tuple[str, AgentlsServer]]


async def sessions(run: Run) -> None:
    """This checkout's server (and the baseline's), each on a long session."""
    started: Contestants = []
    try:
        started.append((OURS, await _start(run, OURS)))
        if run.baseline is not None:
            started.append((BEFORE, await _start(run, BEFORE)))
        for _, session in started:
            await session.run_turn(f"{tag('warm', 0)} warm up")  # the SDK import, connections
        ours = started[0][1]
        run.raw["rss_after_warm_up"] = procs.rss_bytes(ours.pid)
        if run.wants("first-delta") or run.wants("submit"):
            await run.profiled("first-delta", ours.pid, first_delta(run, started))
        if run.wants("throughput"):
            await _new_sessions(started)
            await run.profiled("throughput", ours.pid, throughput(run, started))
            run.raw["rss_after_throughput"] = procs.rss_bytes(ours.pid)
        if run.wants("cancel"):
            await _new_sessions(started)
            await run.profiled("cancel", ours.pid, cancel(run, started))
        if run.wants("load"):
            await ours.call("agent/newSession", {})
            await run.profiled("load", ours.pid, load(run, ours))
        if run.wants("fork"):
            await fork_rpc(run, ours)
    finally:
        for _, session in started:
            await session.close()


async def _start(run: Run, who: str) -> AgentlsServer:
    source = run.baseline if who == BEFORE else None
    name = "agentls-before" if who == BEFORE else "agentls"
    return await AgentlsServer.start(
        run.hub.base_url, run.workspace(), run.stderr_file(name), home=run.home, source=source
    )


async def _new_sessions(contestants: Contestants) -> None:
    for _, session in contestants:
        await session.call("agent/newSession", {})


def _base(run: Run, who: str) -> int:
    from bench.figures import BASE

    return BASE[who]


async def first_delta(run: Run, contestants: Contestants) -> None:
    first: dict[str, list[float]] = {who: [] for who, _ in contestants}
    submit: dict[str, list[float]] = {who: [] for who, _ in contestants}
    for i in range(run.sizes.first_delta_reps):
        for who, session in contestants:
            n = _base(run, who) + i
            turn = await session.run_turn(f"{tag('fd', n)} say hello")
            request = run.hub.seen("fd", n)
            assert request is not None and request.t_first_delta_ns is not None
            from bench.figures import FIRST_DELTA_TEXT

            assert turn.text == FIRST_DELTA_TEXT, "first-delta turn lost text"
            submit[who].append((request.t_arrival_ns - turn.t_send_ns) / 1e6)
            first[who].append((turn.t_first_delta_ns - request.t_first_delta_ns) / 1e6)
    run.raw.setdefault("first_delta", {}).update(first)
    run.raw.setdefault("submit", {}).update(submit)


async def throughput(run: Run, contestants: Contestants) -> None:
    rows: dict[str, list[dict[str, Any]]] = {who: [] for who, _ in contestants}
    for i in range(run.sizes.throughput_reps):
        for who, session in contestants:
            n = _base(run, who) + i
            cpu0 = procs.cpu_seconds(session.pid)
            turn = await session.run_turn(f"{tag('tp', n)} stream fast", timeout=120)
            cpu1 = procs.cpu_seconds(session.pid)
            request = run.hub.seen("tp", n)
            assert request is not None and turn.result is not None
            rows[who].append(
                {
                    "wall_s": (turn.t_result_ns - request.t_arrival_ns) / 1e9,
                    "cpu_s": cpu1 - cpu0,
                    "notifications": turn.notifications,
                    "delta_notifications": turn.delta_notifications,
                    "text_ok": turn.text == run.throughput_text
                    and turn.result.get("finalMessage") == run.throughput_text,
                }
            )
    run.raw.setdefault("throughput", {}).update(rows)


async def cancel(run: Run, contestants: Contestants) -> None:
    from bench.figures import _survivors_after, _wait_sleepers

    rows: dict[str, list[dict[str, Any]]] = {who: [] for who, _ in contestants}
    for i in range(run.sizes.cancel_reps):
        for who, session in contestants:
            n = _base(run, who) + i
            marker = f"300.{run.nonce}{n:06d}"
            run.cancel_commands[n] = f"sh -c 'sleep {marker}; true' & sleep {marker}; wait"
            turn = session.submit(f"{tag('cx', n)} run the slow command")
            try:
                pids = await _wait_sleepers(marker)
                dead: list[bool] = []

                def at_result(
                    message: dict[str, Any],
                    t: int,
                    pids: list[int] = pids,
                    dead: list[bool] = dead,
                    msg_id: int = turn.msg_id,
                ) -> None:
                    if "method" not in message and message.get("id") == msg_id:
                        dead.append(not any(procs.alive(p) for p in pids))

                remove = session.client.listen(at_result)
                t_cancel = time.perf_counter_ns()
                session.client.cancel(turn.msg_id)
                await session.finish(turn, timeout=30)
                remove()
                result = turn.result or {}
                rows[who].append(
                    {
                        "latency_ms": (turn.t_result_ns - t_cancel) / 1e6,
                        "status": result.get("status"),
                        "processes": len(pids),
                        "dead_at_result": bool(dead and dead[0]),
                        "survivors_after_1s": await _survivors_after(pids, run.settle),
                        "receipt": result.get("receipt"),
                    }
                )
            finally:
                procs.kill_all(procs.marked(marker))
    run.raw.setdefault("cancel", {}).update(rows)


async def load(run: Run, session: AgentlsServer) -> None:
    from bench.figures import _wait

    sizes = run.sizes
    counter = itertools.count(_base(run, "load") + 10_000)
    inflight: dict[int, asyncio.Future[Any]] = {}
    sampling = True
    launched = 0

    def launch() -> None:
        nonlocal launched
        n = next(counter)
        msg_id, future = session.client.request(
            "agent/auxiliary", {"prompt": f"{tag('aux', n)} summarise", "context": "clean"}
        )
        launched += 1
        inflight[msg_id] = future
        future.add_done_callback(functools.partial(finished, msg_id))

    def finished(msg_id: int, future: asyncio.Future[Any]) -> None:
        inflight.pop(msg_id, None)
        if not future.cancelled():
            future.exception()  # retrieved: a cancelled job answers -32800
        if sampling:
            launch()

    aux_before = run.hub.count("aux")
    for _ in range(sizes.load_aux):
        launch()
    await _wait(
        lambda: run.hub.count("aux") - aux_before >= sizes.load_aux,
        30,
        "the auxiliary jobs' model requests",
    )
    await asyncio.sleep(0.1)
    first: list[float] = []
    submit: list[float] = []
    t0 = time.monotonic()
    for i in range(sizes.load_reps):
        n = _base(run, "load") + i
        turn = await session.run_turn(f"{tag('fd', n)} say hello")
        request = run.hub.seen("fd", n)
        assert request is not None and request.t_first_delta_ns is not None
        submit.append((request.t_arrival_ns - turn.t_send_ns) / 1e6)
        first.append((turn.t_first_delta_ns - request.t_first_delta_ns) / 1e6)
    elapsed = time.monotonic() - t0
    sampling = False
    for msg_id in list(inflight):
        session.client.cancel(msg_id)
    if inflight:
        await asyncio.wait(list(inflight.values()), timeout=15)
    run.raw["load"] = {
        "first_delta": first,
        "submit": submit,
        "aux_jobs_started": launched,
        "aux_requests": run.hub.count("aux") - aux_before,
        "seconds": elapsed,
    }


async def fork_rpc(run: Run, session: AgentlsServer) -> None:
    """``agent/fork`` round trips on conversations of N items, each made by one
    turn whose answer has N output items."""
    out: dict[str, list[float]] = {}
    for index, size in enumerate(run.sizes.fork_wire_sizes):
        await session.call("agent/newSession", {})
        await session.run_turn(f"{tag('big', size)} long answer", timeout=120)
        times = []
        for _ in range(run.sizes.fork_wire_reps):
            t0 = time.perf_counter_ns()
            result = await session.call("agent/fork", {"pane": "main"})
            times.append((time.perf_counter_ns() - t0) / 1e6)
            assert int(result["items"]) >= size
            await session.call("agent/closePane", {"pane": result["pane"]})
        out[str(size)] = times
        await run.long_submit(size, session.run_turn, _long(run) + 100 * index, OURS)
        await compaction(run, size, session, _long(run) + 100 * index)
    run.raw.setdefault("fork_rpc", {})[OURS] = out


async def compaction(run: Run, size: int, session: AgentlsServer, n: int) -> None:
    """``agent/compact`` of a conversation of ``size`` items: the round trip
    (one summary request to the fake plus the local work), tokens before and
    after, and the input tokens the summary request cost."""
    t0 = time.perf_counter_ns()
    result = await session.call("agent/compact", {"focus": tag("cmp", n)}, timeout=120)
    elapsed = (time.perf_counter_ns() - t0) / 1e6
    request = run.hub.seen("cmp", n)
    assert request is not None and result["mode"] == "summary", result
    summary_ms = ((request.t_done_ns or request.t_arrival_ns) - request.t_arrival_ns) / 1e6
    run.raw.setdefault("compaction", []).append(
        {
            "items": size,
            "ms": elapsed,
            "model_ms": summary_ms,
            "before_tokens": result["beforeTokens"],
            "after_tokens": result["afterTokens"],
            "summary_input_tokens": estimate_input_tokens(request.body),
        }
    )


def _long(run: Run) -> int:
    from bench.figures import LONG

    return LONG[OURS]
