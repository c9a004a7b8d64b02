"""From raw samples to figures and targets (the issue's table)."""

from __future__ import annotations

import math
import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from bench import assemble_features as features
from bench.regression import before_after
from bench.results import (
    BARE,
    BEFORE,
    CODEX,
    OURS,
    SDK_LINES,
    SDK_TYPED,
    Figure,
    Results,
    Target,
)
from bench.stats import Summary
from bench.verdicts import MB, _check, _fmt

if TYPE_CHECKING:
    from bench.figures import Run


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def assemble(run: Run) -> Results:
    raw = run.raw
    results = Results()
    results.meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "mode": "smoke" if run.sizes.smoke else "full",
        "machine": f"{_cpu_model()}, {len(_affinity())} cores available",
        "python": sys.version.split()[0],
        "commit": _commit(),
        "versions": {
            "agentls": _version("agentls"),
            "pygls": _version("pygls"),
            "lsprotocol": _version("lsprotocol"),
            "openai": _version("openai"),
            "codex": run.codex_reason if run.codex_path else "n/a",
        },
        "sizes": {k: v for k, v in vars(run.sizes).items()},
        "seconds": {k: round(v, 2) for k, v in run.timings.items()},
        "load_average": {k: [round(x, 2) for x in v] for k, v in run.loadavg.items()},
    }
    if run.codex_path is None:
        results.notes.append(f"Codex app-server: n/a — {run.codex_reason}.")
    else:
        foreign = sorted(set(run.codex_requests))
        if foreign:
            results.notes.append(
                "Codex sent requests other than POST /v1/responses to the fake: "
                + ", ".join(foreign)
            )
        else:
            results.notes.append(
                f"Codex sent {run.codex_request_count} requests to the fake, every one "
                "`POST /v1/responses` (checked in the fake's log)."
            )
        for failure in run.codex_failures:
            results.notes.append(
                f"Codex failed during the run, and was left out from there: {failure}"
            )
        if raw.get("codex_server_requests"):
            results.notes.append(
                "Codex asked the client: " + ", ".join(sorted(set(raw["codex_server_requests"])))
            )
    codex_na = None if run.codex_path is not None else run.codex_reason
    if "startup" in raw:
        _startup(run, results, codex_na)
    if "submit" in raw:
        _submit(run, results, codex_na)
    if "first_delta" in raw:
        _first_delta(run, results, codex_na)
    if "throughput" in raw:
        _throughput(run, results, codex_na)
    if "cancel" in raw:
        _cancel(run, results, codex_na)
    if "core" in raw:
        _fork(run, results, codex_na)
    if "core" in raw or "rss_idle" in raw:
        _memory(run, results, codex_na)
    if "load" in raw:
        _load(run, results)
    features.assemble(run, results)
    if run.baseline is not None:
        before_after(run, results)
    return results


def _commit() -> str:
    """The commit measured, and whether the server's code differed from it."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "server"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
    except OSError:
        return "unknown"
    if not head:
        return "unknown"
    return f"{head} (server/ modified)" if dirty else head


def _affinity() -> set[int]:
    try:
        import os

        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return {0}


def _na(figure: Figure, codex_na: str | None) -> None:
    if codex_na is not None:
        figure.unavailable[CODEX] = codex_na


def _startup(run: Run, results: Results, codex_na: str | None) -> None:
    raw = run.raw
    fig = results.figure(
        "startup",
        "Startup",
        "spawn the server → the client has the `initialize` result (fresh process each time)",
    )
    _na(fig, codex_na)
    metric = "spawn → initialize result"
    for who in (OURS, BARE, CODEX):
        if raw["startup"].get(who):
            fig.add(metric, who, "ms", raw["startup"][who])
    first = raw["first_turn"]
    if first.get("now"):
        fig.add(
            "first turn, sent as initialize answers: submit → model request",
            OURS,
            "ms",
            first["now"],
        )
    if first.get(CODEX):
        fig.add(
            "first turn, sent as initialize answers: submit → model request",
            CODEX,
            "ms",
            first[CODEX],
            "thread/start, then turn/start → request",
        )
    if first.get("after 1 s"):
        fig.add(
            "first turn, sent 1 s after initialize: submit → model request",
            OURS,
            "ms",
            first["after 1 s"],
        )
    for module, values in raw.get("imports", {}).items():
        fig.add(f"`import {module}` in a fresh interpreter", "python", "ms", values)
    ours, bare = fig.p(metric, OURS), fig.p(metric, BARE)
    if ours is not None and bare is not None:
        fig.targets.append(
            Target(
                "startup p50 ≤ bare pygls p50 + 30 ms",
                _fmt(ours),
                _fmt(bare + 30),
                _check(run, ours <= bare + 30),
                f"{ours - bare:+.1f} ms over bare pygls",
            )
        )
    openai_ms = Summary.of(raw.get("imports", {}).get("openai", [])).p50
    for label, key in (("at once", "now"), ("1 s later", "after 1 s")):
        values = first.get(key)
        if not values:
            continue
        p50 = Summary.of(values).p50
        fig.targets.append(
            Target(
                f"the first turn does not pay for importing the SDK (submitted {label}): "
                "submit → request p50 ≤ 50 ms",
                _fmt(p50),
                "50.00 ms",
                _check(run, p50 <= 50),
                f"`import openai` alone costs {_fmt(openai_ms)}",
            )
        )


def _submit(run: Run, results: Results, codex_na: str | None) -> None:
    raw = run.raw["submit"]
    fig = results.figure(
        "submit",
        "Submit → model request",
        "the client sends `agent/submit` (Codex: `turn/start`; SDK: calls `create()`) → "
        "the request's head reaches the fake",
    )
    _na(fig, codex_na)
    metric = "submit → model request"
    for who in (OURS, BEFORE, CODEX, SDK_TYPED, SDK_LINES):
        if raw.get(who):
            fig.add(metric, who, "ms", raw[who])
    for who, runs in run.raw.get("long_submit", {}).items():
        for long in runs:
            fig.add(
                f"submit → model request, {long['items']:,}-item conversation",
                who,
                "ms",
                long["ms"],
            )
    serialised = run.raw.get("core", {}).get("serialise", {})
    for size, samples in serialised.items():
        name = f"serialising the request body, {int(size):,} items (in-process)"
        fig.add(name, OURS, "ms", samples)
    fig.notes.append(
        "The first metric is measured on the first-delta figure's turns: the conversation "
        "grows from 2 to about 60 items over them."
    )
    ours = fig.p(metric, OURS)
    longest = max((int(s) for s in serialised), default=None)
    if ours is not None and longest is not None:
        long_p50 = fig.p(f"submit → model request, {longest:,}-item conversation", OURS)
        body_p50 = fig.p(f"serialising the request body, {longest:,} items (in-process)", OURS)
        if long_p50 is not None and body_p50 is not None:
            fig.targets.append(
                Target(
                    f"submit → model request at {longest:,} items grows (from the short "
                    "conversation) by at most twice what serialising its body costs",
                    _fmt(long_p50 - ours),
                    _fmt(2 * body_p50),
                    _check(run, long_p50 - ours <= 2 * body_p50),
                    f"{longest:,} items: {_fmt(long_p50)}; serialising: {_fmt(body_p50)}",
                )
            )
    if ours is not None:
        fig.targets.append(
            Target(
                "submit → model request p50 ≤ 5 ms",
                _fmt(ours),
                "5.00 ms",
                _check(run, ours <= 5),
                f"Codex: {_fmt(fig.p(metric, CODEX))}",
            )
        )


def _first_delta(run: Run, results: Results, codex_na: str | None) -> None:
    raw = run.raw["first_delta"]
    fig = results.figure(
        "first-delta",
        "First-delta latency",
        "the fake writes the first `response.output_text.delta` → the client has it "
        "(agentls: the `agent/event` message.delta; Codex: `item/agentMessage/delta`; "
        "SDK: the first delta event / line). The first delta comes 20 ms after the "
        "request, the rest 2 ms apart.",
    )
    _na(fig, codex_na)
    metric = "first delta: fake wrote it → client has it"
    for who in (OURS, BEFORE, CODEX, SDK_TYPED, SDK_LINES):
        if raw.get(who):
            fig.add(metric, who, "ms", raw[who])
    ours, codex = fig.p(metric, OURS), fig.p(metric, CODEX)
    if ours is not None:
        fig.targets.append(
            Target(
                "first-delta p50 ≤ Codex p50 + 0.5 ms",
                _fmt(ours, digits=3),
                _fmt(None if codex is None else codex + 0.5, digits=3),
                _check(run, None if codex is None else ours <= codex + 0.5),
                f"raw SDK (lines): {_fmt(fig.p(metric, SDK_LINES), digits=3)}",
            )
        )
        lines = fig.p(metric, SDK_LINES)
        fig.targets.append(
            Target(
                "first-delta p50 ≤ raw SDK (lines) p50 + 0.5 ms",
                _fmt(ours, digits=3),
                _fmt(None if lines is None else lines + 0.5, digits=3),
                _check(run, None if lines is None else ours <= lines + 0.5),
                f"raw SDK (lines): {_fmt(lines, digits=3)}",
            )
        )


def _throughput(run: Run, results: Results, codex_na: str | None) -> None:
    raw = run.raw["throughput"]
    n = run.sizes.throughput_deltas
    fig = results.figure(
        "throughput",
        "Stream throughput",
        f"{n:,} tiny deltas (distinct, 2-5 characters each) as fast as the fake can send: "
        "the request reaches the fake → the client has all text and the final result. "
        "CPU: the server process (SDK: the consuming thread).",
    )
    _na(fig, codex_na)
    wall, cpu, notes = "wall time", "CPU time", "notifications to the client"
    for who in (OURS, BEFORE, CODEX, SDK_LINES, SDK_TYPED):
        rows = raw.get(who)
        if not rows:
            continue
        fig.add(wall, who, "s", [r["wall_s"] for r in rows])
        fig.add(cpu, who, "s", [r["cpu_s"] for r in rows])
        if rows[0]["notifications"] is not None:
            fig.add(notes, who, "count", [r["notifications"] for r in rows])
        lost = sum(1 for r in rows if not r["text_ok"])
        fig.notes.append(
            f"{who}: text intact in {len(rows) - lost} of {len(rows)} runs"
            + (
                f"; {rows[0]['delta_notifications']:,} delta notifications"
                if rows[0].get("delta_notifications") is not None
                else ""
            )
        )
    ours_rows = raw.get(OURS) or []
    for metric in (wall, cpu):
        ours = fig.p(metric, OURS)
        if ours is None:
            continue
        codex = fig.p(metric, CODEX)
        fig.targets.append(
            Target(
                f"throughput {metric} p50 ≤ 0.8 x Codex",
                _fmt(ours, "s", 3),
                _fmt(None if codex is None else 0.8 * codex, "s", 3),
                _check(run, None if codex is None else ours <= 0.8 * codex),
                f"ratio {ours / codex:.2f} x Codex" if codex else "",
            )
        )
        lines = fig.p(metric, SDK_LINES)
        fig.targets.append(
            Target(
                f"throughput {metric} p50 ≤ 1.2 x raw-lines SDK",
                _fmt(ours, "s", 3),
                _fmt(None if lines is None else 1.2 * lines, "s", 3),
                _check(run, None if lines is None else ours <= 1.2 * lines),
                f"ratio {ours / lines:.2f} x raw-lines SDK" if lines else "",
            )
        )
    if ours_rows:
        worst = max(r["notifications"] for r in ours_rows)
        fig.targets.append(
            Target(
                "notifications ≤ 1/20 of deltas",
                f"{worst:,} (worst run)",
                f"{n // 20:,}",
                _check(run, worst <= n // 20),
                f"{n / worst:.0f} deltas per notification" if worst else "",
            )
        )
        intact = sum(1 for r in ours_rows if r["text_ok"])
        fig.targets.append(
            Target(
                "no text lost or reordered",
                f"{intact} of {len(ours_rows)} runs intact",
                "all runs",
                _check(run, intact == len(ours_rows)),
            )
        )


def _cancel(run: Run, results: Results, codex_na: str | None) -> None:
    raw = run.raw["cancel"]
    fig = results.figure(
        "cancel",
        "Cancel latency",
        "a turn whose `exec_command` runs `sh -c 'sleep 300; true' & sleep 300; wait` "
        "(a child and a grandchild sleep); once both sleeps run: agentls "
        "`$/cancelRequest` on the submit → the cancelled result; Codex `turn/interrupt` → "
        "`turn/completed` (status interrupted). Then /proc: is every process of the turn "
        "dead when the result arrives?",
    )
    _na(fig, codex_na)
    metric = "cancel → cancelled result"
    for who in (OURS, BEFORE, CODEX):
        rows = raw.get(who)
        if not rows:
            continue
        fig.add(metric, who, "ms", [r["latency_ms"] for r in rows])
        if who == CODEX:
            fig.add("interrupt → its answer", who, "ms", [r["answer_ms"] for r in rows])
        dead = sum(1 for r in rows if r["dead_at_result"])
        survivors = sum(1 for r in rows if r["survivors_after_1s"])
        statuses = sorted({str(r["status"]) for r in rows})
        fig.notes.append(
            f"{who}: every process dead when the result arrived in {dead} of {len(rows)} runs "
            f"({100 * dead / len(rows):.0f}%); some still alive 1 s later in {survivors}; "
            f"status {', '.join(statuses)}; {rows[0]['processes']} processes per run"
        )
    rows = raw.get(OURS) or []
    ours50, ours99 = fig.p(metric, OURS), fig.p(metric, OURS, 99)
    if rows and ours50 is not None and ours99 is not None:
        fig.targets.append(
            Target("cancel p50 ≤ 20 ms", _fmt(ours50), "20.00 ms", _check(run, ours50 <= 20))
        )
        fig.targets.append(
            Target("cancel p99 ≤ 50 ms", _fmt(ours99), "50.00 ms", _check(run, ours99 <= 50))
        )
        dead = sum(1 for r in rows if r["dead_at_result"])
        cancelled = sum(1 for r in rows if r["status"] == "cancelled")
        codex_rows = raw.get(CODEX) or []
        codex_dead = sum(1 for r in codex_rows if r["dead_at_result"])
        fig.targets.append(
            Target(
                "every process of the turn dead when the result arrives, 100% of runs",
                f"{100 * dead / len(rows):.0f}% ({dead}/{len(rows)})",
                "100%",
                _check(run, dead == len(rows) and cancelled == len(rows)),
                f"Codex: {100 * codex_dead / len(codex_rows):.0f}% ({codex_dead}/{len(codex_rows)})"
                if codex_rows
                else "",
            )
        )


def _fork(run: Run, results: Results, codex_na: str | None) -> None:
    core = run.raw["core"]["fork"]
    fig = results.figure(
        "fork",
        "Fork cost",
        "in-process: `Agent.fork()` of a conversation of N items (the agent core); over the "
        "wire: the `agent/fork` round trip on a conversation of N items made by one turn "
        "whose answer has N output items (Codex: `thread/fork` with `excludeTurns` of a "
        "persisted thread loaded with `thread/inject_items`)",
    )
    _na(fig, codex_na)
    sizes = sorted(int(k) for k in core)
    p50s = {}
    for n in sizes:
        series = fig.add(
            f"Agent.fork() in-process, {n:,} items", OURS, "ms", core[str(n)]["agent_fork_ms"]
        )
        p50s[n] = series.summary.p50
    for n in sizes:
        fig.add(
            f"History.fork() in-process, {n:,} items",
            "history only",
            "ms",
            core[str(n)]["history_fork_ms"],
        )
    rpc = run.raw.get("fork_rpc", {})
    wire_sizes = sorted({int(k) for who in rpc.values() for k in who})
    for n in wire_sizes:
        for who in (OURS, CODEX):
            samples = rpc.get(who, {}).get(str(n))
            if samples:
                fig.add(f"fork over the wire, {n:,} items", who, "ms", samples)
    if CODEX not in rpc and codex_na is None and run.raw.get("fork_rpc_errors", {}).get(CODEX):
        fig.unavailable[CODEX] = "thread/fork failed: " + run.raw["fork_rpc_errors"][CODEX]
    mid = 10_000 if 10_000 in p50s else sizes[len(sizes) // 2]
    fig.targets.append(
        Target(
            f"fork of a {mid:,}-item conversation p50 ≤ 2 ms (in-process)",
            _fmt(p50s[mid], digits=3),
            "2.000 ms",
            _check(run, p50s[mid] <= 2),
        )
    )
    small, large = p50s[sizes[0]], p50s[sizes[-1]]
    fig.targets.append(
        Target(
            f"independent of length ({' vs '.join(f'{n:,}' for n in sizes)} items, in-process)",
            " / ".join(_fmt(p50s[n], digits=3) for n in sizes),
            f"{sizes[-1]:,} items ≤ 2 ms and ≤ 2 x {sizes[0]:,} items",
            _check(run, large <= 2 and large <= 2 * small + 0.05),
        )
    )
    measured = {n: fig.p(f"fork over the wire, {n:,} items", OURS) for n in wire_sizes}
    ours_wire = {n: v for n, v in measured.items() if v is not None}
    if ours_wire:
        big = max(ours_wire)
        codex_big = fig.p(f"fork over the wire, {big:,} items", CODEX)
        fig.targets.append(
            Target(
                f"fork of a {big:,}-item conversation p50 ≤ 2 ms (over the wire, round trip)",
                _fmt(ours_wire[big], digits=3),
                "2.000 ms",
                _check(run, ours_wire[big] <= 2),
                " / ".join(f"{n:,}: {_fmt(v, digits=3)}" for n, v in sorted(ours_wire.items()))
                + (f"; Codex {big:,}: {_fmt(codex_big)}" if codex_big is not None else ""),
            )
        )


def _memory(run: Run, results: Results, codex_na: str | None) -> None:
    raw = run.raw
    fig = results.figure(
        "memory",
        "Memory",
        "RSS of the server process idle (1 s after its first turn's answer); history memory "
        "(tracemalloc) of main with N items, and what a fork adds; RSS of an in-process "
        "agent core holding main and a fork",
    )
    _na(fig, codex_na)
    for who, value in raw.get("rss_idle", {}).items():
        fig.add("RSS idle", who, "MB", [value / MB])
    if "rss_after_warm_up" in raw:
        fig.add("RSS after the first turn", OURS, "MB", [raw["rss_after_warm_up"] / MB])
    if "codex_rss_after_warm_up" in raw:
        fig.add("RSS after the first turn", CODEX, "MB", [raw["codex_rss_after_warm_up"] / MB])
    if "rss_after_throughput" in raw:
        fig.add("RSS after the throughput runs", OURS, "MB", [raw["rss_after_throughput"] / MB])
    if "core" not in raw:
        return
    mem = raw["core"]["memory"]
    items = mem["items"]
    parent = mem["main_history_bytes"]
    fork = mem["fork_adds_bytes"]
    fig.add(f"main's history, {items:,} items (traced)", OURS, "MB", [parent / MB])
    fig.add("a fork adds (traced)", OURS, "MB", [fork / MB])
    fig.add(
        "then one turn on each pane adds (traced)",
        OURS,
        "MB",
        [mem["after_one_turn_each_bytes"] / MB],
        "two turns of 4 items, and each pane's own flat item list",
    )
    fig.add(
        f"RSS of the core with main ({items:,} items)", OURS, "MB", [mem["rss_main_bytes"] / MB]
    )
    fig.add(
        f"RSS of the core with main + fork ({items:,} items each)",
        OURS,
        "MB",
        [mem["rss_main_and_fork_bytes"] / MB],
    )
    share = fork / parent if parent else math.nan
    fig.targets.append(
        Target(
            "a fork adds ≤ 5% of the parent's history memory",
            f"{fork / 1024:.1f} KB = {100 * share:.2f}%",
            f"{0.05 * parent / 1024:.1f} KB (5%)",
            _check(run, share <= 0.05),
            f"main's {items:,} items: {parent / MB:.2f} MB; {mem['shared_items']:,} items shared",
        )
    )


def _load(run: Run, results: Results) -> None:
    load = run.raw["load"]
    fig = results.figure(
        "load",
        "Under load",
        f"main's first-delta latency while {run.sizes.load_aux} `agent/auxiliary` jobs stream "
        "(each a 400-word answer, a delta every 2 ms; a finished job is replaced at once)",
    )
    metric = "first delta: fake wrote it → client has it"
    fig.add(metric, OURS, "ms", load["first_delta"])
    unloaded = run.raw.get("first_delta", {}).get(OURS)
    if unloaded:
        fig.add(metric, "agentls, no load", "ms", unloaded)
    fig.add("submit → model request", OURS, "ms", load["submit"])
    fig.notes.append(
        f"{load['aux_jobs_started']} auxiliary jobs started ({load['aux_requests']} model "
        f"requests) during {load['seconds']:.1f} s of main turns"
    )
    p99 = fig.p(metric, OURS, 99)
    if p99 is not None:
        fig.targets.append(
            Target(
                f"main's first-delta p99 ≤ 10 ms with {run.sizes.load_aux} auxiliary jobs running",
                _fmt(p99),
                "10.00 ms",
                _check(run, p99 <= 10),
                f"p50 {_fmt(fig.p(metric, OURS))}",
            )
        )
