"""Rendering a turn's ``agent/event`` stream in a terminal.

Answer text goes to stdout as it streams; everything else (tool activity,
reasoning, the live status line) goes to stderr, so ``agentls exec ... >
answer.txt`` captures just the answer.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any, TextIO

DIM, BOLD, RED, GREEN, YELLOW, RESET = (
    "\033[2m",
    "\033[1m",
    "\033[31m",
    "\033[32m",
    "\033[33m",
    "\033[0m",
)
_OUTPUT_LINES = 12  # lines of a tool's output shown in the terminal


class TerminalRenderer:
    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = self.err.isatty()
        self.live = self.err.isatty()
        self._status = ""
        self._at_line_start = True
        self._tool_lines: dict[str, int] = {}
        self._in_reasoning = False
        # The last context meter reading: (tokens, window).
        self.context: tuple[int, int] | None = None
        self._citations: list[dict[str, Any]] = []

    def paint(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    # --- the live status line ---------------------------------------------------------------

    def status(self, message: str) -> None:
        self._status = message
        self._draw_status()

    def _clear_status(self) -> None:
        if self.live and self._status:
            self.err.write("\r\033[K")
            self.err.flush()

    def _draw_status(self) -> None:
        if self.live and self._status:
            width = shutil.get_terminal_size((80, 20)).columns - 4
            self.err.write("\r\033[K" + self.paint(DIM, "⋯ " + self._status[:width]))
            self.err.flush()

    def notice(self, text: str) -> None:
        """A block of text for the user (a question), on its own lines."""
        self._clear_status()
        self._line(self.out)
        self.err.write(text + "\n")
        self.err.flush()

    # --- events --------------------------------------------------------------------------------

    def event(self, event: dict[str, Any]) -> None:
        self._clear_status()
        kind = event["kind"]
        if kind == "message.delta":
            self._end_reasoning()
            self.out.write(event["text"])
            self.out.flush()
            self._at_line_start = event["text"].endswith("\n")
        elif kind == "reasoning.delta":
            if not self._in_reasoning:
                self._line(self.err)
                self._in_reasoning = True
                self.err.write(self.paint(DIM, "thinking: "))
            self.err.write(self.paint(DIM, event["text"]))
        elif kind == "tool.started":
            self._end_reasoning()
            self._line(self.out)
            self.err.write(self.paint(BOLD, f"▶ {event['title']}") + "\n")
            self._tool_lines[event["callId"]] = 0
        elif kind == "tool.output":
            shown = self._tool_lines.get(event["callId"], 0)
            for line in event["text"].splitlines():
                if shown < _OUTPUT_LINES:
                    self.err.write(self.paint(DIM, f"  │ {line}") + "\n")
                elif shown == _OUTPUT_LINES:
                    self.err.write(self.paint(DIM, "  │ …") + "\n")
                shown += 1
            self._tool_lines[event["callId"]] = shown
        elif kind == "tool.finished":
            status, code = event["status"], event.get("exitCode")
            mark = {
                "completed": self.paint(GREEN, "✓"),
                "failed": self.paint(RED, "✗"),
                "cancelled": self.paint(YELLOW, "■"),
            }.get(status, "·")
            detail = f"exit {code}" if code is not None else status
            self.err.write(f"  {mark} {detail}\n")
        elif kind == "steer.applied":
            self.err.write(self.paint(YELLOW, f"↳ steer: {event['text']}") + "\n")
        elif kind == "plan.updated":
            marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
            self.err.write(self.paint(BOLD, "plan:") + "\n")
            for step in event["plan"]:
                self.err.write(f"  {marks.get(step['status'], '[?]')} {step['step']}\n")
        elif kind == "session.resumed":
            turns = event.get("turns", 0)
            self.err.write(
                self.paint(DIM, f"↺ resumed “{event.get('title')}” · {turns} turns") + "\n"
            )
            if event.get("notice"):
                self.err.write(self.paint(YELLOW, event["notice"]) + "\n")
        elif kind == "model.retry":
            self.err.write(self.paint(YELLOW, f"model: {event['reason']}; retrying") + "\n")
        elif kind == "usage":
            self._meter(event)
        elif kind == "tool.preparing":
            self._status = event["title"]
        elif kind == "compaction.started":
            self._end_reasoning()
            self._line(self.out)
            self.err.write(self.paint(DIM, "⟳ compacting the conversation…") + "\n")
        elif kind == "compaction.finished":
            self.err.write(
                self.paint(
                    DIM,
                    f"⟳ context compacted: {tokens(event['beforeTokens'])} → "
                    f"{tokens(event['afterTokens'])} tokens ({event['mode']})",
                )
                + "\n"
            )
        elif kind == "message.citations":
            self._citations.extend(event["citations"])
        elif kind == "message.refusal":
            self._line(self.out)
            self.err.write(self.paint(YELLOW, "(the model refused)") + "\n")
        self.err.flush()
        self._draw_status()

    def _meter(self, source: dict[str, Any]) -> None:
        if "contextTokens" in source and "contextWindow" in source:
            self.context = (int(source["contextTokens"]), int(source["contextWindow"]))

    def meter_text(self) -> str:
        """``context 12.3k of 272k (5%)``, or "" before the first reading."""
        if self.context is None:
            return ""
        used, window = self.context
        share = round(100 * used / window) if window else 0
        return f"context {tokens(used)} of {tokens(window)} ({share}%)"

    def _end_reasoning(self) -> None:
        if self._in_reasoning:
            self.err.write("\n")
            self._in_reasoning = False

    def _line(self, stream: TextIO) -> None:
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True

    def result(self, result: dict[str, Any]) -> None:
        self._clear_status()
        self._end_reasoning()
        self._line(self.out)
        status = result["status"]
        usage = result.get("usage") or {}
        self._meter(usage)
        if self._citations:
            self.err.write(self.paint(BOLD, "sources:") + "\n")
            for number, source in enumerate(self._citations, 1):
                title = f"{source['title']} — " if source.get("title") else ""
                self.err.write(f"  [{number}] {title}{source['url']}\n")
        if status == "completed":
            meter = self.meter_text()
            self.err.write(
                self.paint(
                    DIM,
                    (
                        f"— done · {usage.get('inputTokens', 0)} tokens in, "
                        f"{usage.get('outputTokens', 0)} out" + (f" · {meter}" if meter else "")
                    )
                    + "\n",
                )
            )
        elif status == "cancelled":
            receipt = result.get("receipt") or {}
            aborted = ", ".join(c["tool"] for c in receipt.get("abortedToolCalls", [])) or "none"
            self.err.write(
                self.paint(
                    YELLOW,
                    (
                        f"— cancelled · aborted tool calls: {aborted} · processes killed: "
                        f"{receipt.get('killedProcesses', 0)}, still running: "
                        f"{receipt.get('survivingProcesses', 0)}"
                    )
                    + "\n",
                )
            )
        else:
            self.err.write(
                self.paint(RED, f"— failed: {result.get('error', 'unknown error')}") + "\n"
            )
        self.err.flush()

    def session(self, session_id: str) -> None:
        self.err.write(
            self.paint(DIM, f"— session {session_id[:12]} (continue: agentls exec --resume)") + "\n"
        )
        self.err.flush()


def tokens(count: int) -> str:
    """A token count the way people read it: 950, 12.3k, 272k, 1.0M."""
    if count < 1000:
        return str(count)
    if count < 100_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"
