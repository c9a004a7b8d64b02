"""From raw samples to the figures of the features added after the first
bench: the sandbox, MCP, compaction, the session store, edits through the
editor (``assemble`` makes the others)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.results import OURS, Results, Target
from bench.verdicts import MB, _check, _fmt

if TYPE_CHECKING:
    from bench.figures import Run


def assemble(run: Run, results: Results) -> None:
    raw = run.raw
    if "sandbox" in raw:
        _sandbox(run, results)
    if "mcp" in raw:
        _mcp(run, results)
    if "compaction" in raw:
        _compaction(run, results)
    if "sessions" in raw:
        _sessions(run, results)
    if "edits" in raw:
        _edits(run, results)


def _edits(run: Run, results: Results) -> None:
    from bench.edit_figures import APPLY_EDIT, DISK

    raw = run.raw["edits"]
    lines, hunks = raw["lines"], raw["hunks"]
    docs = raw["documents"]
    fig = results.figure(
        "edits",
        "Edits through the editor",
        f"`apply_patch` of a {hunks}-hunk patch on a {lines:,}-line open file, on two servers "
        "in alternation: one whose client takes `workspace/applyEdit` (applies it to its "
        "document, sends `didChange`, saves, then answers, as the VS Code extension does), "
        "one whose client cannot (the patch is written on disk). Round trip: the fake "
        "finished sending the call → the request with the tool's output reaches it; and "
        "`tool.started` → `tool.finished` at the client. Memory: the server's RSS before "
        f"and after the client opens {docs['count']} documents of {docs['lines']:,} lines "
        "(each with an unsaved line), once a `read_file` has seen the last one",
    )
    model = "model's call → next model request"
    events = "tool.started → tool.finished"
    for who in (APPLY_EDIT, DISK):
        fig.add(model, who, "ms", raw["round_trip"][who]["model"])
        fig.add(events, who, "ms", raw["round_trip"][who]["events"])
    fig.add(
        "of which the client's applyEdit handler",
        APPLY_EDIT,
        "ms",
        raw["client_ms"],
        "the bench's Python editor: apply, didChange, save",
    )
    fig.notes.append(
        f"{raw['applied_edits']} patches arrived as workspace/applyEdit on the first server, "
        f"{raw['disk_edits_seen']} on the disk path's (every one checked in the document "
        "and on disk)"
    )
    editor, disk = fig.p(model, APPLY_EDIT), fig.p(model, DISK)
    if editor is not None and disk is not None:
        fig.targets.append(
            Target(
                f"apply_patch through applyEdit ({hunks} hunks, {lines:,}-line open file): "
                "round trip p50 ≤ disk path + 20 ms",
                _fmt(editor),
                _fmt(disk + 20),
                _check(run, editor <= disk + 20),
                f"disk path {_fmt(disk)}; {editor - disk:+.2f} ms",
            )
        )
    size = docs["text_bytes"] / MB
    growth = (docs["rss_after"] - docs["rss_before"]) / MB
    fig.add("RSS before the documents", OURS, "MB", [docs["rss_before"] / MB])
    fig.add(f"RSS with {docs['count']} documents open", OURS, "MB", [docs["rss_after"] / MB])
    fig.add(f"their text ({docs['count']} documents)", OURS, "MB", [size])
    fig.targets.append(
        Target(
            f"RSS growth with {docs['count']} open documents ≤ 3 times their text",
            _fmt(growth, "MB"),
            _fmt(3 * size, "MB"),
            _check(run, growth <= 3 * size),
            f"their text {_fmt(size, 'MB')}",
        )
    )


def _sandbox(run: Run, results: Results) -> None:
    raw = run.raw["sandbox"]
    fig = results.figure(
        "sandbox",
        "Sandbox overhead per command",
        "`exec_command` of `true`, through the tool (launch, wait, sweep, exit status), "
        "alternately in a pane's sandbox (bubblewrap: its own pid and network namespace, "
        "a read-only root) and unsandboxed; the sandbox itself is started by a pane's "
        "first command and kept (noted separately).",
    )
    if not raw["available"]:
        fig.unavailable["sandboxed"] = raw["reason"]
    metric = "exec_command `true`"
    fig.add(metric, "unsandboxed", "ms", raw["unsandboxed"])
    if raw["sandboxed"]:
        fig.add(metric, "sandboxed", "ms", raw["sandboxed"])
        fig.notes.append(
            f"The first command of a pane starts its sandbox: {_fmt(raw['first'])} (once per pane)."
        )
        added = fig.p(metric, "sandboxed")
        base = fig.p(metric, "unsandboxed")
        if added is not None and base is not None:
            fig.targets.append(
                Target(
                    "sandbox overhead per command (p50 sandboxed minus p50 unsandboxed) ≤ 15 ms",
                    _fmt(added - base),
                    "15.00 ms",
                    _check(run, added - base <= 15),
                    f"p50 sandboxed {_fmt(added)}, unsandboxed {_fmt(base)}",
                )
            )


def _compaction(run: Run, results: Results) -> None:
    fig = results.figure(
        "compaction",
        "Compaction",
        "`agent/compact` on a conversation of N items (one answer of N short messages): "
        "the round trip, which holds one summary request to the fake (it answers at once) "
        "and the local work; the conversation's tokens before and after; the input tokens "
        "the summary request cost (the fake's count)",
    )
    rows = run.raw["compaction"]
    for row in rows:
        n = f"{row['items']:,} items"
        fig.add(f"agent/compact round trip, {n}", OURS, "ms", [row["ms"]])
        fig.add(f"of which the summary request, {n}", OURS, "ms", [row["model_ms"]])
        fig.add(f"conversation before, {n}", OURS, "tokens", [row["before_tokens"]])
        fig.add(f"conversation after, {n}", OURS, "tokens", [row["after_tokens"]])
        fig.add(f"summary request input, {n}", OURS, "tokens", [row["summary_input_tokens"]])
    largest = max(rows, key=lambda row: row["items"])
    fig.targets.append(
        Target(
            f"compacting a {largest['items']:,}-item conversation takes ≤ 1 s besides the model",
            _fmt(largest["ms"] - largest["model_ms"]),
            "1000.00 ms",
            _check(run, largest["ms"] - largest["model_ms"] <= 1000),
            f"round trip {_fmt(largest['ms'])}",
        )
    )
    fig.targets.append(
        Target(
            "a compaction leaves ≤ 10% of the tokens",
            f"{largest['after_tokens']:,} of {largest['before_tokens']:,}",
            f"{largest['before_tokens'] // 10:,}",
            _check(run, largest["after_tokens"] <= largest["before_tokens"] // 10),
            f"the summary request read {largest['summary_input_tokens']:,} tokens",
        )
    )


def _sessions(run: Run, results: Results) -> None:
    raw = run.raw["sessions"]
    on, off = OURS, "agentls, sessions off"
    fig = results.figure(
        "sessions",
        "Session store",
        f"The {run.sizes.throughput_deltas:,}-delta flood on two servers, one saving its "
        "sessions and one not (sessionRetention 0), in alternation; agent/resume of a "
        f"{raw['resume_items']:,}-item session and agent/sessions with {raw['listed']} "
        "sessions stored (round trips); the journal writes of one committed step "
        "(response with a tool call, its 2 KB output, the commit) in-process: what the agent "
        "waits for, and until the flusher thread has fsynced them.",
    )
    flood = raw["flood"]
    for who, rows in ((on, flood["on"]), (off, flood["off"])):
        fig.add("flood wall time", who, "s", [r["wall_s"] for r in rows])
        fig.add("flood CPU time", who, "s", [r["cpu_s"] for r in rows])
        lost = sum(1 for r in rows if not r["text_ok"])
        fig.notes.append(f"{who}: text intact in {len(rows) - lost} of {len(rows)} runs")
    for metric in ("flood wall time", "flood CPU time"):
        saved, unsaved = fig.p(metric, on), fig.p(metric, off)
        if saved is None or unsaved is None:
            continue
        fig.targets.append(
            Target(
                f"the store costs the flood ≤ 5% ({metric.removeprefix('flood ')}, p50)",
                f"{saved:.3f} s vs {unsaved:.3f} s off",
                f"{1.05 * unsaved:.3f} s",
                _check(run, saved <= 1.05 * unsaved),
                f"{(saved / unsaved - 1) * 100:+.1f}%" if unsaved else "",
            )
        )
    checks = (
        ("resume_ms", f"agent/resume, {raw['resume_items']:,} items", 200.0, "resume"),
        ("list_ms", f"agent/sessions, {raw['listed']} sessions", 50.0, "listing"),
        ("step_ms", "journal writes per committed step", 2.0, "write"),
    )
    fig.add("committed step → fsynced", on, "ms", raw["durable_ms"])
    for key, metric, limit, what in checks:
        fig.add(metric, on, "ms", raw[key])
        p50, p90 = fig.p(metric, on), fig.p(metric, on, 90)
        assert p50 is not None and p90 is not None
        fig.targets.append(
            Target(
                f"{what}: {metric} p50 ≤ {limit:g} ms",
                _fmt(p50),
                _fmt(limit),
                _check(run, p50 <= limit),
                f"p90 {_fmt(p90)}",
            )
        )


def _mcp(run: Run, results: Results) -> None:
    from bench.mcp_figures import DIRECT

    raw = run.raw["mcp"]
    fig = results.figure(
        "mcp",
        "MCP tool calls",
        "a tool of an MCP server on stdio (bench/mcp_probe.py, written with the `mcp` SDK) "
        "called by the model: the fake finished sending the call → the MCP tool runs; the "
        "tool answered → the next model request reaches the fake. The same probe called "
        "straight from the SDK's `Client` is the floor; start-up with three MCP servers "
        "configured is measured interleaved with start-up without",
    )
    to_server, to_model = "model's call → MCP server has it", "MCP answer → next model request"
    fig.add(to_server, OURS, "ms", raw["to_server"])
    fig.add(to_model, OURS, "ms", raw["to_model"])
    direct = raw.get("direct", {})
    if direct:
        fig.add(
            to_server, DIRECT, "ms", direct["to_server"], "`call_tool()` called → MCP server has it"
        )
        fig.add(to_model, DIRECT, "ms", direct["back"], "MCP answer → `call_tool()` returns")
    startup = raw.get("startup", {})
    metric = "spawn → initialize result"
    if startup:
        fig.add(metric, "agentls, no MCP servers", "ms", startup["none"])
        fig.add(metric, "agentls, 3 MCP servers", "ms", startup["three"])
        first = "first turn, sent as initialize answers: submit → model request"
        fig.add(first, "agentls, no MCP servers", "ms", startup["first_turn"]["none"])
        fig.add(
            first,
            "agentls, 3 MCP servers",
            "ms",
            startup["first_turn"]["three"],
            "the servers start once the model client is ready",
        )
    for text, name in (
        (to_server, "model's call → MCP server"),
        (to_model, "MCP answer → next model request"),
    ):
        p50 = fig.p(text, OURS)
        if p50 is not None:
            fig.targets.append(
                Target(
                    f"MCP tool-call overhead, {name}: p50 ≤ 5 ms",
                    _fmt(p50),
                    "5.00 ms",
                    _check(run, p50 <= 5),
                    f"SDK client alone: {_fmt(fig.p(text, DIRECT))}",
                )
            )
    none = fig.p(metric, "agentls, no MCP servers")
    three = fig.p(metric, "agentls, 3 MCP servers")
    if none is not None and three is not None:
        fig.targets.append(
            Target(
                "initialize with 3 MCP servers configured: p50 ≤ without + 30 ms",
                _fmt(three),
                _fmt(none + 30),
                _check(run, three <= none + 30),
                f"{three - none:+.1f} ms",
            )
        )
