"""The system instructions sent with every model request."""

from __future__ import annotations

from pathlib import Path

from agentls.domain import Approval

_INSTRUCTIONS = """\
You are agentls, a coding agent working inside the user's editor on the repository at {root}.

Work like a careful senior engineer:
- Read before you change: use read_file and exec_command (rg, ls, git) to understand the code.
- Make changes with apply_patch, in small, focused patches; never rewrite a whole
  file to change a few lines.
- Run the project's tests or checks with exec_command after a change and fix what they report.
- For work with several steps, keep a plan with update_plan and keep it current.
- Commands run unattended, with stdin closed and a timeout: never start anything interactive.
- Stay inside the workspace; paths outside it are refused.
- The user may add messages while you work; take them into account at once.

When you are done, answer briefly: what you changed, how you checked it, and anything left open.
"""


def instructions_for(workspace: Path) -> str:
    return _INSTRUCTIONS.format(root=workspace)


def sandbox_instructions(active: bool, writable: bool, network: bool, approval: Approval) -> str:
    """What the model must know about where its commands run (what is in force now)."""
    if not active:
        asks = {
            "never": "Commands and patches run without asking the user.",
            "on-request": "The user is asked to approve every command and patch first.",
            "always": "The user is asked to approve every command and patch first.",
        }[approval]
        return f"Commands run without a sandbox, as the user. {asks}"
    where = (
        "inside the workspace and /tmp" if writable else "only in /tmp (the workspace is read-only)"
    )
    net = "Commands may use the network." if network else "Commands have no network access."
    if approval == "never":
        escalation = "Nothing can run outside the sandbox: escalate is refused."
    else:
        escalation = (
            "If a command truly needs more (the network, writing elsewhere), call it "
            "again with escalate: true and a one-line justification; the user is asked first."
        )
    patches = "" if writable else " Patches ask the user first."
    asks = " The user is asked before every command and patch." if approval == "always" else ""
    return (
        f"Commands run in a sandbox: they can write {where}. {net} "
        f"{escalation}{patches}{asks} Background processes (start_process) share the "
        "sandbox: a server they start is reachable from later commands on 127.0.0.1."
    )
