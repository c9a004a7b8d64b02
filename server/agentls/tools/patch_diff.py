"""A patch as the unified diff of what it would change (for the user to
approve before it is applied): computed in memory, nothing is written."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentls.tools.apply_patch import PatchError, plan_patch
from agentls.tools.files import OpenText
from agentls.tools.workspace import Workspace


def preview_diff(
    patch: str, workspace: Workspace, documents: Mapping[Path, OpenText] | None = None
) -> str | None:
    """The unified diff, file by file (against the editor's text of open
    ``documents``); None if the patch does not apply."""
    try:
        plan = plan_patch(patch, workspace, documents)
    except (PatchError, OSError):
        return None
    return plan.diff()
