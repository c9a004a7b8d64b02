"""``agentls exec`` asks its terminal before what the approval policy guards.

The server sends ``agent/requestApproval``; we show the command (and why the
model wants it outside the sandbox) or the patch as a diff, and read one
answer: allow once, allow for this session, or deny (with an optional reason
the model reads). Without a terminal nobody can answer: the call is refused,
and the message names the flags that let such calls run without asking.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TextIO

from agentls.client.render import BOLD, DIM, GREEN, RED, TerminalRenderer

_CHOICES = {
    "y": "allow",
    "yes": "allow",
    "s": "allowSession",
    "session": "allowSession",
    "n": "deny",
    "no": "deny",
}
_DIFF_LINES = 60  # of a patch's diff, shown before asking


def no_terminal_reason(params: dict[str, Any]) -> str:
    """Why a call is refused without a terminal, naming the flag that allows it."""
    if params.get("tool") == "apply_patch":
        flags = "--approval never"
    else:
        flags = (
            "--approval never (for a command outside the sandbox: --sandbox off --approval never)"
        )
    return (
        "agentls exec has no terminal to ask the user, so this call is refused; "
        f"to let such calls run without asking, run agentls exec with {flags}"
    )


class TerminalApprover:
    def __init__(self, renderer: TerminalRenderer, terminal: TextIO | None) -> None:
        self._renderer = renderer
        # Where answers are read (stdin, when it is a terminal); None: nobody can answer.
        self._terminal = terminal
        self._lock = asyncio.Lock()

    @classmethod
    def for_stdin(cls, renderer: TerminalRenderer) -> TerminalApprover:
        return cls(renderer, sys.stdin if sys.stdin.isatty() else None)

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        renderer = self._renderer
        err = renderer.err
        what = params.get("command") or params.get("title") or params.get("tool", "?")
        if self._terminal is None:
            reason = no_terminal_reason(params)
            renderer.notice(renderer.paint(RED, f"✗ not allowed: {what}\n  {reason}"))
            return {"decision": "deny", "reason": reason}
        async with self._lock:  # one question at a time
            renderer.notice(self._question(params))
            while True:
                err.write(
                    renderer.paint(BOLD, "Allow? ")
                    + "[y] once, [s] for this session, [n] deny (n: reason): "
                )
                err.flush()
                line = await asyncio.to_thread(self._terminal.readline)
                if not line:  # the terminal closed
                    return {"decision": "deny", "reason": "nobody answered"}
                choice, _, reason = line.strip().partition(":")
                decision = _CHOICES.get(choice.strip().lower())
                if decision is None:
                    continue
                answer: dict[str, Any] = {"decision": decision}
                if decision == "deny" and reason.strip():
                    answer["reason"] = reason.strip()
                mark = renderer.paint(GREEN if decision != "deny" else RED, decision)
                err.write(f"  → {mark}\n")
                err.flush()
                return answer

    def _question(self, params: dict[str, Any]) -> str:
        paint = self._renderer.paint
        lines = [paint(BOLD, f"agentls wants to: {params.get('title', params.get('tool'))}")]
        if params.get("command"):
            shell = params.get("tool") in ("exec_command", "start_process")
            lines.append(f"  {'$ ' if shell else ''}{params['command']}")
        if params.get("justification"):
            lines.append(paint(DIM, f"  why: {params['justification']}"))
        diff = params.get("diff")
        if diff:
            shown = diff.splitlines()
            for line in shown[:_DIFF_LINES]:
                color = GREEN if line.startswith("+") else RED if line.startswith("-") else DIM
                lines.append("  " + paint(color, line))
            if len(shown) > _DIFF_LINES:
                lines.append(paint(DIM, f"  … {len(shown) - _DIFF_LINES} more lines"))
        return "\n".join(lines)
