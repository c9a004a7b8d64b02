"""The system instructions sent with every model request.

What a careful agent needs to know and nobody else tells it: where it is (OS,
shell, date, workspace), what it may do (the approval policy and the sandbox in
force), how to edit (the patch format's rules), how to treat the user's
repository (git etiquette), how to answer, and the project's own instructions
(``AGENTS.md``, see ``project_docs``).

The policy part is built by ``policy_lines`` from a ``Policy``: what is in
force now (the approval policy, and whether the shell sandbox confines
commands, as the agent's shell reports it).
"""

from __future__ import annotations

import datetime
import platform
from dataclasses import dataclass
from pathlib import Path

from agentls.agent.project_docs import ProjectDocs
from agentls.domain import Approval


@dataclass(frozen=True, slots=True)
class Policy:
    """What is in force for the agent's commands and patches now."""

    approval: Approval
    # Whether commands run in the shell sandbox (it may be off, or unavailable).
    sandboxed: bool = False
    # Whether the sandbox lets commands write the workspace ("workspace-write").
    writable: bool = True
    # Whether sandboxed commands may use the network.
    network: bool = False


@dataclass(frozen=True, slots=True)
class Environment:
    """Where the agent works; taken once per session."""

    workspace: Path
    os_name: str
    date: str
    shell: str = "bash"

    @classmethod
    def here(cls, workspace: Path) -> Environment:
        system = platform.system() or "an unknown OS"
        release = platform.release()
        os_name = f"{system} {release}".strip() if system != "Darwin" else "macOS"
        return cls(workspace, os_name, datetime.date.today().isoformat())


def policy_lines(policy: Policy) -> list[str]:
    """Where commands run and what asks the user first (what is in force now)."""
    approval = policy.approval
    if not policy.sandboxed:
        asks = {
            "never": "Commands and patches run without asking the user: take care with "
            "anything that deletes or overwrites.",
            "on-request": "The user is asked to approve every command and patch first.",
            "always": "The user is asked to approve every command and patch first.",
        }[approval]
        return [
            "Sandbox: none. Commands run with the user's own permissions; they can change "
            "anything the user can, so stay inside the workspace.",
            f"Approval ({approval}): {asks}",
        ]
    where = (
        "inside the workspace and /tmp"
        if policy.writable
        else "only in /tmp (the workspace is read-only)"
    )
    net = "They may use the network." if policy.network else "They have no network access."
    if approval == "never":
        escalation = "Nothing can run outside the sandbox: escalate is refused."
    else:
        escalation = (
            "If a command truly needs more (the network, writing elsewhere), call it "
            "again with escalate: true and a one-line justification; the user is asked first."
        )
    patches = "" if policy.writable else " Patches ask the user first."
    always = " The user is asked before every command and patch." if approval == "always" else ""
    return [
        f"Sandbox: commands can write {where}. {net} Background processes (start_process) "
        "share the sandbox: a server they start is reachable from later commands on "
        "127.0.0.1.",
        f"Approval ({approval}): {escalation}{patches}{always} If the user denies a call, the "
        "output says so and why: do not retry the same thing, adapt or ask.",
    ]


_BODY = """\
# How to work
- Read before you change: use read_file and exec_command (rg, ls, git) to understand the code.
- Make changes with apply_patch, in small, focused patches; never rewrite a whole
  file to change a few lines.
- Run the project's tests or checks with exec_command after a change and fix what they report.
- For work with several steps, keep a plan with update_plan and keep it current.
- Commands run unattended, with stdin closed and a timeout: never start anything interactive.
- Stay inside the workspace; paths outside it are refused.
- The user may add messages while you work; take them into account at once.
- Tool outputs are bounded: long command output keeps its head and tail, read_file
  returns at most 256 lines or 32 KiB per call (read on with `offset`).

# Editing with apply_patch
- A patch is `*** Begin Patch`, one or more file sections, `*** End Patch`.
- `*** Add File: path` then every line prefixed with `+`.
- `*** Delete File: path` alone.
- `*** Update File: path` (optionally `*** Move to: new/path`), then hunks: each starts
  with `@@` (optionally followed by a line such as a function header that locates
  it) and has three lines of unchanged context around each change, prefixed with
  a space; removed lines start with `-`, added lines with `+`.
- Paths are relative to the workspace root, never absolute.
- A patch applies whole or not at all; when one fails, read the file again and
  write a new patch against what is there.

# Git
- The user may be working in this tree too: never revert, discard or overwrite
  changes you did not make.
- Never run `git reset --hard`, `git checkout -- <path>`, `git clean`, or anything
  else that throws work away, unless the user asked for exactly that.
- Do not commit, amend, rebase, push or create branches unless the user asks you to.

# Your answers
- Answer briefly: what you changed, how you checked it, anything left open.
- Name files as `path/to/file.py:42` so the editor can link them.
- Do not paste whole files or long outputs back; the user can open them.
- Use Markdown lightly: short paragraphs, lists, code spans, fenced code only when needed.
"""


def build(environment: Environment, policy: Policy, project: ProjectDocs) -> str:
    """The instructions for one session (rebuilt when the policy changes)."""
    lines = [
        "You are agentls, a coding agent working inside the user's editor.",
        "",
        "# Environment",
        f"- Workspace: {environment.workspace}",
        f"- Operating system: {environment.os_name}; commands run with "
        f"`{environment.shell} -lc` in the workspace.",
        f"- Today's date: {environment.date}",
        *(f"- {line}" for line in policy_lines(policy)),
        "",
        _BODY,
    ]
    if project.text:
        lines += [
            "# Project instructions",
            "The user and the repository give these instructions (AGENTS.md files, most "
            "general first). Follow them; where they disagree, the later (more specific) wins.",
            "",
            project.text,
        ]
    return "\n".join(lines).rstrip() + "\n"
