"""A patch as the unified diff of what it would change (for the user to
approve before it is applied): computed in memory, nothing is written."""

from __future__ import annotations

import difflib

from agentls.tools.apply_patch import PatchError, plan_patch
from agentls.tools.workspace import Workspace


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def preview_diff(patch: str, workspace: Workspace) -> str | None:
    """The unified diff, file by file; None if the patch does not apply."""
    try:
        plan = plan_patch(patch, workspace)
    except (PatchError, OSError):
        return None
    parts: list[str] = []
    for path, final in plan.pending.items():
        original = plan.disk.get(path)
        name = workspace.relative(path)
        before = _lines(original.data) if original is not None and original.kind == "file" else []
        after = _lines(final.data) if final.kind == "file" else []
        old_name = (
            f"a/{name}" if original is not None and original.kind != "absent" else "/dev/null"
        )
        new_name = f"b/{name}" if final.kind != "absent" else "/dev/null"
        diff = list(difflib.unified_diff(before, after, old_name, new_name))
        for line in diff:
            parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(parts)
