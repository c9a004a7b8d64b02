"""The ``apply_patch`` tool and ``agentls apply-patch``: a patch planned in
memory (``agentls.tools.patch``), then applied all or nothing — through the
editor when one is there, else to disk. A patch that fails changes nothing."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import anyio

from agentls.tools.base import FunctionTool, SandboxState, ToolContext, ToolResult, get_str
from agentls.tools.files import EditRefused, Files, OpenText
from agentls.tools.patch.diff import unified_diff
from agentls.tools.patch.edit import as_edit
from agentls.tools.patch.errors import NOTHING_CHANGED, PatchError, nothing_changed
from agentls.tools.patch.grammar import affected_paths
from agentls.tools.patch.plan import PatchResult, plan_patch
from agentls.tools.workspace import PathOutsideWorkspace, Workspace


def apply_patch(text: str, workspace: Workspace) -> PatchResult:
    """Apply ``text`` to the files of ``workspace``, all or nothing.

    Raises :class:`PatchError` (and then no file was changed) if the patch does
    not parse or any of its changes does not apply.
    """
    try:
        plan = plan_patch(text, workspace)
    except PatchError as exc:
        raise nothing_changed(exc) from None
    plan.commit()  # its errors say themselves whether the rollback worked
    return PatchResult(tuple(plan.changes))


def open_documents(text: str, workspace: Workspace, files: Files) -> dict[Path, OpenText]:
    """The documents open in the editor among the files a patch names."""
    paths: list[Path] = []
    for raw in affected_paths(text):
        with contextlib.suppress(PathOutsideWorkspace, ValueError, RuntimeError, OSError):
            paths.append(workspace.resolve(raw))
    return files.documents(paths) if paths else {}


def main(patch: bytes, cwd: str) -> int:
    """``agentls apply-patch``: apply ``patch`` in ``cwd``; 0 if applied, 1 if not."""
    try:
        text = patch.decode("utf-8")
    except UnicodeDecodeError as exc:
        print(f"error: the patch is not UTF-8 text (byte {exc.start})", file=sys.stderr)
        return 1
    try:
        workspace = Workspace(cwd)
        result = apply_patch(text, workspace)
    except (PatchError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(result.summary())
    return 0


class ApplyPatch(FunctionTool):
    name = "apply_patch"
    description = (
        "Edit files with a patch. Format:\n"
        "*** Begin Patch\n"
        "*** Add File: path/new.txt\n+every line of the new file, prefixed with +\n"
        "*** Delete File: path/old.txt\n"
        "*** Update File: path/file.py\n"
        "*** Move to: path/renamed.py   (optional)\n"
        "@@ def function_or_class_to_anchor_on():\n"
        " unchanged context line (3 lines before and after each change)\n"
        "-removed line\n+added line\n"
        "*** End Patch\n"
        "Paths are relative to the workspace. The patch is applied all or nothing: "
        "if any part does not apply, no file changes."
    )
    properties = {"patch": {"type": "string", "description": "The whole patch text."}}
    required = ("patch",)

    def sandboxed(self, args: dict[str, Any], sandbox: SandboxState) -> bool:
        # It writes only inside the workspace: what the sandbox lets commands do too.
        return sandbox.writable

    def title(self, args: dict[str, Any], workspace: Workspace) -> str:
        paths = affected_paths(str(args.get("patch", "")))
        if not paths:
            return "Editing files"
        shown = ", ".join(paths[:3])
        return f"Editing {shown}" + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        text = get_str(args, "patch") or ""
        documents = open_documents(text, ctx.workspace, ctx.files)
        # Shielded: once a patch starts applying it finishes, so its real output
        # (not "aborted") is what the model sees even if the turn is cancelled now.
        with anyio.CancelScope(shield=True):
            try:
                plan = await anyio.to_thread.run_sync(plan_patch, text, ctx.workspace, documents)
                note = await ctx.files.apply(as_edit(plan))
            except PatchError as exc:
                return ToolResult.error(str(nothing_changed(exc)))
            except EditRefused as exc:
                return ToolResult.error(f"{exc}\n{NOTHING_CHANGED}")
            diff = await anyio.to_thread.run_sync(unified_diff, plan)
        output = PatchResult(tuple(plan.changes)).summary()
        return ToolResult(output=f"{output}\n{note}" if note else output, diff=diff or None)
