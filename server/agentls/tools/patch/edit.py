"""A planned patch as an editor applies it: one ``FileEdit`` of changes,
renames, creations and deletions (committed to disk by the plan when no
editor takes it)."""

from __future__ import annotations

from pathlib import Path

from agentls.tools.files import FileEdit, FileOp
from agentls.tools.patch.plan import Plan, utf8


def unsaved(plan: Plan) -> list[str]:
    """Files the patch changes whose editor text is not what is on disk."""
    return [
        plan.ws.relative(path)
        for path in plan.pending
        if path in plan.documents and plan.original(path) != plan.on_disk(path)
    ]


def as_edit(plan: Plan) -> FileEdit:
    """The patch as steps for an editor (and as a disk write)."""
    renames = _renames(plan)
    moved_to = set(renames.values())
    ops: list[FileOp] = []
    for path, final in plan.pending.items():
        if path in moved_to:
            continue  # written by the rename of its source
        original = plan.original(path)
        dest = renames.get(path)
        if dest is not None:
            after = plan.pending[dest].data
            if after != original.data:
                ops.append(_change(plan, path, original.data, after))
            overwrite = plan.original(dest).kind != "absent"
            ops.append(FileOp("rename", path, new_path=dest, overwrite=overwrite))
        elif final.kind == "absent":
            if original.kind != "absent":
                ops.append(FileOp("delete", path))
        elif original.kind == "file" and utf8(original.data) is not None:
            if final.data != original.data:
                ops.append(_change(plan, path, original.data, final.data))
        else:
            text = final.data.decode("utf-8", errors="replace")
            ops.append(FileOp("create", path, after=text, overwrite=original.kind != "absent"))
    names = {path: plan.ws.relative(path) for path in [*plan.pending, *renames.values()]}
    return FileEdit(tuple(ops), plan.commit, tuple(unsaved(plan)), names)


def _renames(plan: Plan) -> dict[Path, Path]:
    """Moves that are plain renames: a regular file whose content goes to
    a new name, leaving nothing at the old one."""
    renames: dict[Path, Path] = {}
    for source, dest in plan.moves.items():
        source_final, dest_final = plan.pending.get(source), plan.pending.get(dest)
        if (
            source != dest
            and source_final is not None
            and source_final.kind == "absent"
            and dest_final is not None
            and dest_final.kind == "file"
            and plan.original(source).kind == "file"
            and utf8(plan.original(source).data) is not None
        ):
            renames[source] = dest
    return renames


def _change(plan: Plan, path: Path, before: bytes, after: bytes) -> FileOp:
    document = plan.documents.get(path)
    return FileOp(
        "change",
        path,
        before=before.decode("utf-8"),
        after=after.decode("utf-8", errors="replace"),
        version=document.version if document is not None else None,
    )
