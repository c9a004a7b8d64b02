"""A patch as the unified diff of what it changes, file by file: after it
was applied (the tool's result), or before (for the user to approve),
computed in memory without writing anything."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

from agentls.tools.files import OpenText, text_lines
from agentls.tools.patch.errors import PatchError
from agentls.tools.patch.plan import Plan, plan_patch
from agentls.tools.workspace import Workspace


def unified_diff(plan: Plan) -> str:
    """The unified diff of what the planned patch changes, file by file."""
    parts: list[str] = []
    for path, final in plan.pending.items():
        original = plan.original(path)
        name = plan.ws.relative(path)
        before = _diff_lines(original.data) if original.kind == "file" else []
        after = _diff_lines(final.data) if final.kind == "file" else []
        old_name = f"a/{name}" if original.kind != "absent" else "/dev/null"
        new_name = f"b/{name}" if final.kind != "absent" else "/dev/null"
        for line in difflib.unified_diff(before, after, old_name, new_name):
            parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(parts)


def preview_diff(
    patch: str, workspace: Workspace, documents: Mapping[Path, OpenText] | None = None
) -> str | None:
    """The unified diff, file by file (against the editor's text of open
    ``documents``); None if the patch does not apply."""
    try:
        plan = plan_patch(patch, workspace, documents)
    except (PatchError, OSError):
        return None
    return unified_diff(plan)


def _diff_lines(data: bytes) -> list[str]:
    return text_lines(data.decode("utf-8", errors="replace"))
