"""Planning a patch: every hunk resolved in memory against the files (and
the editor's open documents) into final states, checked before anything is
written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentls.tools.files import OpenText
from agentls.tools.patch import disk
from agentls.tools.patch.disk import ABSENT, State
from agentls.tools.patch.errors import PatchError
from agentls.tools.patch.grammar import ChangeKind, Hunk, parse_patch
from agentls.tools.patch.update import apply_chunks
from agentls.tools.workspace import PathOutsideWorkspace, Workspace


@dataclass(frozen=True)
class FileChange:
    """One applied change; paths are workspace-relative, POSIX style."""

    kind: ChangeKind
    path: str
    move_to: str | None = None


@dataclass(frozen=True)
class PatchResult:
    changes: tuple[FileChange, ...]

    def summary(self) -> str:
        """Codex's wording, which the models know: added, then modified, then deleted."""
        added = [c.path for c in self.changes if c.kind == "add"]
        modified = [c.move_to or c.path for c in self.changes if c.kind == "update"]
        deleted = [c.path for c in self.changes if c.kind == "delete"]
        lines = ["Success. Updated the following files:"]
        lines += [f"A {p}" for p in added]
        lines += [f"M {p}" for p in modified]
        lines += [f"D {p}" for p in deleted]
        return "\n".join(lines)


@dataclass(frozen=True)
class Loc:
    """Where a patch path points."""

    raw: str
    # The directory entry: its parent resolved, its own name as written (so a
    # symlink is the link itself, which Delete removes).
    entry: Path
    # The content: symlinks followed. Equal to ``entry`` unless it is a symlink.
    real: Path


class Plan:
    """The whole patch resolved in memory: final states, to be committed at once.

    ``documents`` are the files open in the editor (real paths): the patch
    applies to their text there, unsaved changes included, not to the disk."""

    def __init__(
        self, workspace: Workspace, documents: Mapping[Path, OpenText] | None = None
    ) -> None:
        self.ws = workspace
        self.documents = documents or {}
        # Final state of every entry the patch changes, in the order first changed.
        self.pending: dict[Path, State] = {}
        # On-disk state of every entry looked at, read once (for rollback too).
        self.disk: dict[Path, State] = {}
        self.new_dirs: dict[Path, None] = {}  # directories to create, parents first
        self.changes: list[FileChange] = []
        # Update File + Move to: the source entry and where its content went.
        self.moves: dict[Path, Path] = {}

    # -- looking ------------------------------------------------------------------

    def locate(self, raw: str, line: int) -> Loc:
        try:
            real = self.ws.resolve(raw)
            name = Path(raw).expanduser().name
            if name in ("", ".", ".."):
                entry = real
            else:
                entry = self.ws.resolve(Path(raw).expanduser().parent) / name
        except PathOutsideWorkspace:
            raise PatchError(
                "the path is outside the workspace; only files inside it can be changed",
                path=raw,
                line=line,
            ) from None
        except (ValueError, RuntimeError, OSError) as exc:
            raise PatchError(f"invalid path: {exc}", path=raw, line=line) from None
        if real == self.ws.root or entry == self.ws.root:
            raise PatchError("the path is the workspace root, not a file", path=raw, line=line)
        return Loc(raw, entry, real)

    def state(self, path: Path) -> State:
        """The state of ``path`` as the patch so far leaves it."""
        if path in self.pending:
            return self.pending[path]
        if path in self.new_dirs:
            return State("dir")
        return self.original(path)

    def original(self, path: Path) -> State:
        """What the patch applies to at ``path``: the editor's text of an open
        document, else the disk."""
        on_disk = self.on_disk(path)
        document = self.documents.get(path)
        if document is None or on_disk.kind not in ("file", "absent"):
            return on_disk
        return State("file", document.text.encode("utf-8"), on_disk.mode)

    def on_disk(self, path: Path) -> State:
        if path not in self.disk:
            self.disk[path] = disk.read_state(self.ws, path)
        return self.disk[path]

    def content(self, loc: Loc) -> State:
        """What reading ``loc`` gives: through a symlink still on disk, to its target."""
        if loc.entry in self.pending or loc.entry == loc.real:
            return self.state(loc.entry)
        return self.state(loc.real)

    def write_target(self, loc: Loc) -> Path:
        # Writing through a symlink updates its target, as Codex's plain write
        # does; once the patch replaced the link itself, write the entry.
        return loc.entry if loc.entry in self.pending else loc.real

    # -- planning ------------------------------------------------------------------

    def set(self, path: Path, state: State) -> None:
        self.on_disk(path)  # remember the original before planning over it
        self.pending[path] = state

    def plan_write(self, path: Path, data: bytes, mode: int | None, loc: Loc, line: int) -> None:
        self.plan_dirs(path.parent, loc, line)
        current = self.state(path)
        if current.kind == "dir":
            raise PatchError("it is a directory, not a file", path=loc.raw, line=line)
        if current.kind == "other":
            raise PatchError("it is not a regular file", path=loc.raw, line=line)
        self.set(path, State("file", data, mode))

    def plan_dirs(self, directory: Path, loc: Loc, line: int) -> None:
        """Plan to create the missing directories down to ``directory``."""
        parts = directory.relative_to(self.ws.root).parts
        current = self.ws.root
        for part in parts:
            current = current / part
            state = self.state(current)
            if state.kind == "dir":
                continue
            if state.kind == "absent" and self.on_disk(current).kind == "absent":
                self.new_dirs[current] = None
                continue
            what = self.ws.relative(current)
            raise PatchError(
                f"cannot create the directory {what!r}: a file is in the way",
                path=loc.raw,
                line=line,
            )

    def add(self, hunk: Hunk) -> None:
        loc = self.locate(hunk.path, hunk.line)
        target = self.write_target(loc)
        before = self.state(target)
        mode = before.mode if before.kind == "file" else None  # overwriting keeps the mode
        self.plan_write(target, hunk.contents.encode("utf-8"), mode, loc, hunk.line)
        self.changes.append(FileChange("add", self.ws.relative(loc.entry)))

    def delete(self, hunk: Hunk) -> None:
        loc = self.locate(hunk.path, hunk.line)
        state = self.state(loc.entry)
        if state.kind == "absent":
            raise PatchError(
                "cannot delete it: the file does not exist", path=hunk.path, line=hunk.line
            )
        if state.kind == "dir":
            raise PatchError(
                "cannot delete it: it is a directory (Delete File deletes files only)",
                path=hunk.path,
                line=hunk.line,
            )
        if state.kind == "other":
            raise PatchError("cannot delete it: not a regular file", path=hunk.path, line=hunk.line)
        self.set(loc.entry, ABSENT)
        self.changes.append(FileChange("delete", self.ws.relative(loc.entry)))

    def update(self, hunk: Hunk) -> None:
        loc = self.locate(hunk.path, hunk.line)
        current = self.content(loc)
        if current.kind == "absent":
            raise PatchError(
                "cannot update it: the file does not exist (use '*** Add File:' to create a file)",
                path=hunk.path,
                line=hunk.line,
            )
        if current.kind == "dir":
            raise PatchError("cannot update it: it is a directory", path=hunk.path, line=hunk.line)
        if current.kind != "file":
            raise PatchError("cannot update it: not a regular file", path=hunk.path, line=hunk.line)
        try:
            text = current.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PatchError(
                f"the file is not UTF-8 text (invalid byte at offset {exc.start}); "
                "apply_patch only edits UTF-8 text files",
                path=hunk.path,
                line=hunk.line,
            ) from None
        # A byte order mark is not part of the first line: keep it aside.
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        new_text = bom + apply_chunks(text[len(bom) :], hunk.chunks, hunk.path)
        data = new_text.encode("utf-8")

        source = self.write_target(loc)
        moved = None
        if hunk.move_to is not None:
            dest = self.locate(hunk.move_to, hunk.line)
            if dest.entry != loc.entry and self.write_target(dest) != source:
                moved = dest
        if moved is None:
            self.plan_write(source, data, current.mode, loc, hunk.line)
            self.changes.append(FileChange("update", self.ws.relative(loc.entry)))
            return
        dest_path = self.write_target(moved)
        # The moved file keeps its mode (as git mv does), replacing any file there.
        self.plan_write(dest_path, data, current.mode, moved, hunk.line)
        self.set(loc.entry, ABSENT)
        self.moves[loc.entry] = dest_path
        self.changes.append(
            FileChange("update", self.ws.relative(loc.entry), self.ws.relative(moved.entry))
        )

    # -- committing ------------------------------------------------------------------

    def commit(self) -> None:
        """Write the planned states, all or nothing (raises PatchWriteFailed)."""
        disk.commit(self.ws, self.pending, self.disk, self.new_dirs)


def plan_patch(
    text: str, workspace: Workspace, documents: Mapping[Path, OpenText] | None = None
) -> Plan:
    """The patch resolved against the files (and the editor's ``documents``),
    in memory: nothing is written. Raises :class:`PatchError` if it does not
    parse or apply."""
    patch = parse_patch(text)
    if not patch.hunks:
        raise PatchError(
            "the patch is empty: it has no '*** Add File:', "
            "'*** Delete File:' or '*** Update File:' section"
        )
    plan = Plan(workspace, documents)
    for hunk in patch.hunks:
        if hunk.kind == "add":
            plan.add(hunk)
        elif hunk.kind == "delete":
            plan.delete(hunk)
        else:
            plan.update(hunk)
    return plan


def utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
