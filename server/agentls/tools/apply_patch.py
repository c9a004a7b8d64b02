"""``apply_patch``: the ``*** Begin Patch`` edit format that OpenAI's models write.

The grammar and the matching rules follow OpenAI Codex's ``apply_patch`` (its
own scenarios, read in place from ``../shared/conformance/apply_patch``),
because that is the format the models are trained on::

    *** Begin Patch
    *** Add File: path/new.txt
    +line one
    *** Delete File: path/old.txt
    *** Update File: path/mod.txt
    *** Move to: path/renamed.txt
    @@ def anchor():
     context line
    -removed line
    +added line
    *** End of File
    *** End Patch

One deliberate difference: applying is **atomic**. The whole patch is parsed
and resolved against the current files in memory first; only when every
change is known to apply is anything written, each file through a temporary
file renamed into place. If a write still fails, the files already changed are
restored. A patch that fails therefore changes nothing.

Every path goes through :class:`Workspace`: it must resolve inside the
workspace, and all access is descriptor-relative without following symlinks,
so nothing outside the workspace can be read or written.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio

from agentls.tools.base import FunctionTool, SandboxState, ToolContext, ToolResult, get_str
from agentls.tools.files import EditRefused, FileEdit, FileOp, Files, OpenText, text_lines
from agentls.tools.workspace import PathOutsideWorkspace, Workspace

__all__ = [
    "ApplyPatch",
    "FileChange",
    "Hunk",
    "Patch",
    "PatchError",
    "PatchResult",
    "UpdateChunk",
    "affected_paths",
    "apply_patch",
    "main",
    "parse_patch",
]

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
_HUNK_HEADERS = (ADD_FILE, DELETE_FILE, UPDATE_FILE)

_NOTHING_CHANGED = "The patch was not applied; no files were changed."

ChangeKind = Literal["add", "delete", "update"]
Op = Literal[" ", "-", "+"]


class PatchError(Exception):
    """A patch that cannot be parsed or applied. The message is for the model."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        where = path or ""
        if line is not None:
            where = f"{where} (patch line {line})" if where else f"patch line {line}"
        super().__init__(f"{where}: {message}" if where else message)


# --- the parsed patch ---------------------------------------------------------


@dataclass(frozen=True)
class UpdateChunk:
    """One ``@@`` section of an Update File: lines to find and what replaces them."""

    # The text after ``@@ ``: a line (a def or class, usually) to find first.
    context: str | None
    # Every body line in order, as (op, text); op is " " (keep), "-" or "+".
    lines: tuple[tuple[Op, str], ...]
    # ``*** End of File``: the old lines must be the last lines of the file.
    end_of_file: bool
    # 1-based line of the patch where the chunk starts, for messages.
    line: int

    @property
    def old_lines(self) -> list[str]:
        return [text for op, text in self.lines if op != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for op, text in self.lines if op != "-"]


@dataclass(frozen=True)
class Hunk:
    """One ``*** Add/Delete/Update File`` section."""

    kind: ChangeKind
    path: str
    line: int
    move_to: str | None = None
    contents: str = ""  # the new file of an Add File
    chunks: tuple[UpdateChunk, ...] = ()


@dataclass(frozen=True)
class Patch:
    hunks: tuple[Hunk, ...]

    def paths(self) -> list[str]:
        """Every path the patch names, in order, without repeats."""
        seen: dict[str, None] = {}
        for hunk in self.hunks:
            seen[hunk.path] = None
            if hunk.move_to is not None:
                seen[hunk.move_to] = None
        return list(seen)


# --- the result -------------------------------------------------------------------


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


# --- parsing --------------------------------------------------------------------

# ``<<'EOF'`` (the heredoc a model sometimes wraps the patch in), optionally
# preceded by the command name as it would be in a shell.
_HEREDOC = re.compile(
    r"(?:(?:apply_patch|applypatch)\s+)?<<-?\s*(?P<q>['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P=q)"
)


def parse_patch(text: str) -> Patch:
    """Parse a patch (leniently, like Codex) without touching any file."""
    lines, first_number = _body_lines(text)
    return _Parser(lines, first_number).parse()


def _body_lines(text: str) -> tuple[list[str], int]:
    """The lines between the Begin and End markers, and the patch line number of the first."""
    if text.startswith("\ufeff"):
        text = text[1:]
    # Like Rust's str::lines, which Codex uses: split on LF, drop a CR before it.
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    # Codex trims the whole text first: blank lines around the patch don't count.
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    body = lines[start:end]
    number = start + 1
    if not body:
        raise PatchError(
            f"the patch is empty; it must start with {BEGIN_PATCH!r} and end with {END_PATCH!r}"
        )
    if body[0].strip() != BEGIN_PATCH:
        heredoc = _HEREDOC.fullmatch(body[0].strip())
        if heredoc and len(body) >= 4 and body[-1].strip() == heredoc["word"]:
            body = body[1:-1]
            number += 1
    if body[0].strip() != BEGIN_PATCH:
        raise PatchError(f"the first line of the patch must be {BEGIN_PATCH!r}", line=number)
    if len(body) < 2 or body[-1].strip() != END_PATCH:
        raise PatchError(
            f"the last line of the patch must be {END_PATCH!r}", line=number + len(body) - 1
        )
    return body[1:-1], number + 1


def _is_hunk_boundary(line: str) -> bool:
    # Codex stops an Update File at any line starting with '*'; we also accept
    # a whitespace-padded hunk header there (padding is accepted everywhere else).
    return line.startswith("*") or line.strip().startswith(_HUNK_HEADERS)


class _Parser:
    def __init__(self, lines: list[str], first_number: int) -> None:
        self.lines = lines
        self.first_number = first_number

    def number(self, index: int) -> int:
        return self.first_number + index

    def parse(self) -> Patch:
        hunks: list[Hunk] = []
        i = 0
        while i < len(self.lines):
            if not self.lines[i].strip():  # blank lines between sections are harmless
                i += 1
                continue
            hunk, i = self.hunk(i, hunks[-1] if hunks else None)
            hunks.append(hunk)
        return Patch(tuple(hunks))

    def path(self, raw: str, index: int) -> str:
        path = raw.strip()
        if not path:
            raise PatchError("missing file path after the marker", line=self.number(index))
        return path

    def hunk(self, i: int, previous: Hunk | None) -> tuple[Hunk, int]:
        header = self.lines[i].strip()
        number = self.number(i)
        if header.startswith(ADD_FILE):
            path = self.path(header[len(ADD_FILE) :], i)
            j = i + 1
            added: list[str] = []
            while j < len(self.lines) and self.lines[j].startswith("+"):
                added.append(self.lines[j][1:])
                j += 1
            # A bare empty line followed by more '+' lines: the model forgot the
            # '+' of an empty line. Say so, rather than "'+x' is not a header".
            k = j
            while k < len(self.lines) and not self.lines[k].strip():
                k += 1
            if k > j and k < len(self.lines) and self.lines[k].startswith("+"):
                raise PatchError(
                    "empty line inside an added file; every line of an added file must "
                    "start with '+' (a lone '+' for an empty line)",
                    path=path,
                    line=self.number(j),
                )
            contents = "".join(f"{line}\n" for line in added)
            return Hunk("add", path, number, contents=contents), j
        if header.startswith(DELETE_FILE):
            return Hunk("delete", self.path(header[len(DELETE_FILE) :], i), number), i + 1
        if header.startswith(UPDATE_FILE):
            return self.update(i, self.path(header[len(UPDATE_FILE) :], i))
        hint = ""
        if previous is not None and previous.kind == "add":
            hint = f" (every line of the added file {previous.path} must start with '+')"
        elif previous is not None and previous.kind == "update":
            hint = " (lines of an Update File must start with ' ', '-', '+' or '@@')"
        raise PatchError(
            f"{header!r} is not a valid hunk header; expected '*** Add File: PATH', "
            f"'*** Delete File: PATH', '*** Update File: PATH' or '*** End Patch'{hint}",
            line=number,
        )

    def update(self, i: int, path: str) -> tuple[Hunk, int]:
        number = self.number(i)
        j = i + 1
        move_to = None
        if j < len(self.lines) and self.lines[j].strip().startswith(MOVE_TO):
            move_to = self.path(self.lines[j].strip()[len(MOVE_TO) :], j)
            j += 1
        chunks: list[UpdateChunk] = []
        while j < len(self.lines):
            line = self.lines[j]
            if not line.strip():  # blank lines between chunks are skipped
                j += 1
                continue
            if _is_hunk_boundary(line):
                break
            chunk, j = self.chunk(j, path, first=not chunks)
            chunks.append(chunk)
        if not chunks:
            raise PatchError(
                "the Update File section has no changes; expected '@@' followed by lines "
                "starting with ' ' (context), '-' (remove) or '+' (add)",
                path=path,
                line=number,
            )
        return Hunk("update", path, number, move_to=move_to, chunks=tuple(chunks)), j

    def chunk(self, i: int, path: str, *, first: bool) -> tuple[UpdateChunk, int]:
        line = self.lines[i]
        number = self.number(i)
        context: str | None = None
        j = i
        if line.strip() == "@@":
            j += 1
        elif line.startswith("@@ "):
            context = line[3:] if line[3:].strip() else None
            j += 1
        elif not first:
            # Codex lets only the first chunk omit its @@ line.
            raise PatchError(
                f"expected a '@@' line to start the next change, got {line!r}",
                path=path,
                line=number,
            )
        ops: list[tuple[Op, str]] = []
        end_of_file = False
        while j < len(self.lines):
            line = self.lines[j]
            if line.strip() == END_OF_FILE:
                if not ops:
                    break
                end_of_file = True
                j += 1
                break
            if line == "":  # an empty line is an empty context line, as in Codex
                ops.append((" ", ""))
            elif line[0] in " -+" and not (line[0] == " " and _is_hunk_boundary(line)):
                ops.append((_op(line[0]), line[1:]))
            elif not ops:
                raise PatchError(
                    f"unexpected line {line!r} in an Update File change; every line must "
                    "start with ' ' (context), '-' (remove) or '+' (add)",
                    path=path,
                    line=self.number(j),
                )
            else:  # the start of the next chunk or section
                break
            j += 1
        if not ops:
            raise PatchError("a change ('@@') with no lines in it", path=path, line=number)
        return UpdateChunk(context, tuple(ops), end_of_file, number), j


def _op(char: str) -> Op:
    if char == "-":
        return "-"
    if char == "+":
        return "+"
    return " "


def affected_paths(text: str) -> list[str]:
    """The paths a patch names (Move to destinations included); ``[]`` if it doesn't parse."""
    try:
        return parse_patch(text).paths()
    except Exception:  # for titles only: never let a bad patch raise here
        return []


# --- matching (Codex's seek_sequence) ---------------------------------------------

# Typographic punctuation a model tends to write as ASCII (and vice versa).
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),  # dashes
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),  # single quotes
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),  # double quotes
        # no-break and other odd spaces
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


def _normalise(line: str) -> str:
    return line.strip().translate(_PUNCTUATION)


def _exact(line: str) -> str:
    return line


# Strictest first: a looser level only runs when no stricter one matched anywhere.
_MATCH_LEVELS: tuple[Callable[[str], str], ...] = (_exact, str.rstrip, str.strip, _normalise)


def seek_sequence(
    lines: Sequence[str], pattern: Sequence[str], start: int, end_of_file: bool
) -> int | None:
    """Index of the first run of ``pattern`` in ``lines`` at or after ``start``, or None.

    With ``end_of_file`` only the run ending at the last line is tried (as Codex does).
    """
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    last = len(lines) - len(pattern)
    first = last if end_of_file else start
    for key in _MATCH_LEVELS:
        keyed = [key(line) for line in lines]
        want = [key(line) for line in pattern]
        for i in range(first, last + 1):
            if keyed[i : i + len(want)] == want:
                return i
    return None


# --- computing the new text of an updated file ------------------------------------

_EOL = re.compile(r"\r\n|\r|\n")

# A file line as (text, ending); the ending is "" for a last line without one.
_Line = tuple[str, str]


def _split_lines(text: str) -> list[_Line]:
    # CRLF, bare CR and LF all end a line, and each line keeps its own ending.
    lines: list[_Line] = []
    pos = 0
    for m in _EOL.finditer(text):
        lines.append((text[pos : m.start()], m.group()))
        pos = m.end()
    if pos < len(text):
        lines.append((text[pos:], ""))
    return lines


def _without_final_blank(ops: Sequence[tuple[Op, str]]) -> list[tuple[Op, str]]:
    """``ops`` minus the final empty old line (and the final new line, if empty).

    Codex retries a chunk whose old lines end in "" without it (and without a
    final "" new line): that "" is usually the file's last newline, which is
    not a line of its own. Done on ops so that kept lines stay kept.
    """
    result = list(ops)
    old_at = max(i for i, (op, _) in enumerate(result) if op != "+")
    new_at = max((i for i, (op, _) in enumerate(result) if op != "-"), default=None)
    drop: set[int] = set()
    if new_at is not None and result[new_at][1] == "":
        if new_at == old_at:  # one kept "" line: drop it from both sides
            return result[:new_at] + result[new_at + 1 :]
        if result[new_at][0] == "+":
            drop.add(new_at)
        else:  # a kept "" that stays in the old lines only
            result[new_at] = ("-", "")
    if result[old_at][0] == "-":
        drop.add(old_at)
    else:  # a kept line that stays in the new lines only
        result[old_at] = ("+", result[old_at][1])
    return [op for i, op in enumerate(result) if i not in drop]


def _apply_chunks(text: str, chunks: Sequence[UpdateChunk], path: str) -> str:
    lines = _split_lines(text)
    texts = [t for t, _ in lines]
    # Replacements as (start, number of old lines, ops), found in patch order.
    replacements: list[tuple[int, int, Sequence[tuple[Op, str]]]] = []
    index = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = seek_sequence(texts, [chunk.context], index, False)
            if found is None:
                after = " after the previous change" if index else ""
                raise PatchError(
                    f"could not find the '@@' context line {chunk.context!r} in the file{after}",
                    path=path,
                    line=chunk.line,
                )
            index = found + 1
        ops: Sequence[tuple[Op, str]] = chunk.lines
        old = chunk.old_lines
        if not old:
            if chunk.context is not None:
                # Right after the anchor. (Codex appends at end of file even
                # then, which is never what an anchored addition means.)
                at = index
            else:
                # Codex: at the end, but before a final empty line (unless
                # the previous change already took that line).
                at = len(texts) - 1 if texts and texts[-1] == "" else len(texts)
                at = max(at, index)
            replacements.append((at, 0, ops))
            continue
        found = seek_sequence(texts, old, index, chunk.end_of_file)
        if found is None and old[-1] == "":
            ops = _without_final_blank(ops)
            old = [t for op, t in ops if op != "+"]
            found = seek_sequence(texts, old, index, chunk.end_of_file)
        if found is None:
            if chunk.end_of_file:
                where = "at the end of the file"
            elif chunk.context is not None:
                where = f"in the file after the '@@' line {chunk.context.strip()!r}"
            elif index:
                where = "in the file after the previous change"
            else:
                where = "in the file"
            shown = "\n".join(f"    {line}" for line in chunk.old_lines)
            raise PatchError(
                f"could not find these lines {where} (context and '-' lines must match "
                f"the current content; read the file again if unsure):\n{shown}",
                path=path,
                line=chunk.line,
            )
        replacements.append((found, len(old), ops))
        index = found + len(old)

    out: list[tuple[str, str | None]] = []
    cursor = 0
    for start, old_len, ops in sorted(replacements, key=lambda r: r[0]):
        if start < cursor:
            raise PatchError(
                "two changes of this Update File overlap in the file", path=path, line=None
            )
        out.extend(lines[cursor:start])
        pos = start
        for op, new_text in ops:
            if op == " ":
                # Keep the file's own line (its whitespace and ending), which
                # may differ from the patch's after a tolerant match.
                out.append(lines[pos])
                pos += 1
            elif op == "-":
                pos += 1
            else:
                out.append((new_text, None))
        cursor = start + old_len
    out.extend(lines[cursor:])

    # New lines take the file's first line ending; like Codex, an updated file
    # always ends with one.
    preferred = next((ending for _, ending in lines if ending), "\n")
    return "".join(t + (ending or preferred) for t, ending in out)


# --- resolving against the files, then committing -----------------------------------


@dataclass(frozen=True)
class _Loc:
    """Where a patch path points."""

    raw: str
    # The directory entry: its parent resolved, its own name as written (so a
    # symlink is the link itself, which Delete removes).
    entry: Path
    # The content: symlinks followed. Equal to ``entry`` unless it is a symlink.
    real: Path


@dataclass(frozen=True)
class _State:
    """What is at one path: on disk before the patch, or planned by it."""

    kind: Literal["absent", "file", "dir", "symlink", "other"]
    data: bytes = b""
    mode: int | None = None  # permission bits of a file
    target: str = ""  # of a symlink


_ABSENT = _State("absent")


class _Plan:
    """The whole patch resolved in memory: final states, to be committed at once.

    ``documents`` are the files open in the editor (real paths): the patch
    applies to their text there, unsaved changes included, not to the disk."""

    def __init__(
        self, workspace: Workspace, documents: Mapping[Path, OpenText] | None = None
    ) -> None:
        self.ws = workspace
        self.documents = documents or {}
        # Final state of every entry the patch changes, in the order first changed.
        self.pending: dict[Path, _State] = {}
        # On-disk state of every entry looked at, read once (for rollback too).
        self.disk: dict[Path, _State] = {}
        self.new_dirs: dict[Path, None] = {}  # directories to create, parents first
        self.changes: list[FileChange] = []
        # Update File + Move to: the source entry and where its content went.
        self.moves: dict[Path, Path] = {}

    # -- looking ------------------------------------------------------------------

    def locate(self, raw: str, line: int) -> _Loc:
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
        return _Loc(raw, entry, real)

    def state(self, path: Path) -> _State:
        """The state of ``path`` as the patch so far leaves it."""
        if path in self.pending:
            return self.pending[path]
        if path in self.new_dirs:
            return _State("dir")
        return self.original(path)

    def original(self, path: Path) -> _State:
        """What the patch applies to at ``path``: the editor's text of an open
        document, else the disk."""
        disk = self.on_disk(path)
        document = self.documents.get(path)
        if document is None or disk.kind not in ("file", "absent"):
            return disk
        return _State("file", document.text.encode("utf-8"), disk.mode)

    def on_disk(self, path: Path) -> _State:
        if path not in self.disk:
            self.disk[path] = _read_state(self.ws, path)
        return self.disk[path]

    def content(self, loc: _Loc) -> _State:
        """What reading ``loc`` gives: through a symlink still on disk, to its target."""
        if loc.entry in self.pending or loc.entry == loc.real:
            return self.state(loc.entry)
        return self.state(loc.real)

    def write_target(self, loc: _Loc) -> Path:
        # Writing through a symlink updates its target, as Codex's plain write
        # does; once the patch replaced the link itself, write the entry.
        return loc.entry if loc.entry in self.pending else loc.real

    # -- planning ------------------------------------------------------------------

    def set(self, path: Path, state: _State) -> None:
        self.on_disk(path)  # remember the original before planning over it
        self.pending[path] = state

    def plan_write(self, path: Path, data: bytes, mode: int | None, loc: _Loc, line: int) -> None:
        self.plan_dirs(path.parent, loc, line)
        current = self.state(path)
        if current.kind == "dir":
            raise PatchError("it is a directory, not a file", path=loc.raw, line=line)
        if current.kind == "other":
            raise PatchError("it is not a regular file", path=loc.raw, line=line)
        self.set(path, _State("file", data, mode))

    def plan_dirs(self, directory: Path, loc: _Loc, line: int) -> None:
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
        self.set(loc.entry, _ABSENT)
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
        new_text = bom + _apply_chunks(text[len(bom) :], hunk.chunks, hunk.path)
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
        self.set(loc.entry, _ABSENT)
        self.moves[loc.entry] = dest_path
        self.changes.append(
            FileChange("update", self.ws.relative(loc.entry), self.ws.relative(moved.entry))
        )

    # -- as a diff ------------------------------------------------------------------

    def diff(self) -> str:
        """The unified diff of what the patch changes, file by file."""
        parts: list[str] = []
        for path, final in self.pending.items():
            original = self.original(path)
            name = self.ws.relative(path)
            before = _diff_lines(original.data) if original.kind == "file" else []
            after = _diff_lines(final.data) if final.kind == "file" else []
            old_name = f"a/{name}" if original.kind != "absent" else "/dev/null"
            new_name = f"b/{name}" if final.kind != "absent" else "/dev/null"
            for line in difflib.unified_diff(before, after, old_name, new_name):
                parts.append(
                    line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                )
        return "".join(parts)

    # -- as an edit ----------------------------------------------------------------

    def unsaved(self) -> list[str]:
        """Files the patch changes whose editor text is not what is on disk."""
        return [
            self.ws.relative(path)
            for path in self.pending
            if path in self.documents and self.original(path) != self.on_disk(path)
        ]

    def edit(self) -> FileEdit:
        """The patch as steps for an editor (and as a disk write)."""
        renames = self._renames()
        moved_to = set(renames.values())
        ops: list[FileOp] = []
        for path, final in self.pending.items():
            if path in moved_to:
                continue  # written by the rename of its source
            original = self.original(path)
            dest = renames.get(path)
            if dest is not None:
                after = self.pending[dest].data
                if after != original.data:
                    ops.append(self._change(path, original.data, after))
                overwrite = self.original(dest).kind != "absent"
                ops.append(FileOp("rename", path, new_path=dest, overwrite=overwrite))
            elif final.kind == "absent":
                if original.kind != "absent":
                    ops.append(FileOp("delete", path))
            elif original.kind == "file" and _utf8(original.data) is not None:
                if final.data != original.data:
                    ops.append(self._change(path, original.data, final.data))
            else:
                text = final.data.decode("utf-8", errors="replace")
                ops.append(FileOp("create", path, after=text, overwrite=original.kind != "absent"))
        names = {path: self.ws.relative(path) for path in [*self.pending, *renames.values()]}
        return FileEdit(tuple(ops), self.commit, tuple(self.unsaved()), names)

    def _renames(self) -> dict[Path, Path]:
        """Moves that are plain renames: a regular file whose content goes to
        a new name, leaving nothing at the old one."""
        renames: dict[Path, Path] = {}
        for source, dest in self.moves.items():
            source_final, dest_final = self.pending.get(source), self.pending.get(dest)
            if (
                source != dest
                and source_final is not None
                and source_final.kind == "absent"
                and dest_final is not None
                and dest_final.kind == "file"
                and self.original(source).kind == "file"
                and _utf8(self.original(source).data) is not None
            ):
                renames[source] = dest
        return renames

    def _change(self, path: Path, before: bytes, after: bytes) -> FileOp:
        document = self.documents.get(path)
        return FileOp(
            "change",
            path,
            before=before.decode("utf-8"),
            after=after.decode("utf-8", errors="replace"),
            version=document.version if document is not None else None,
        )

    # -- committing ------------------------------------------------------------------

    def commit(self) -> None:
        writes: list[Path] = []
        deletes: list[Path] = []
        for path, final in self.pending.items():
            original = self.disk[path]
            if final.kind == "absent":
                if original.kind != "absent":
                    deletes.append(path)
            elif original != final:  # an update that changes nothing is not written
                writes.append(path)

        created: list[Path] = []
        done: list[Path] = []
        current = ""
        try:
            for directory in self.new_dirs:
                current = self.ws.relative(directory)
                if _make_dir(self.ws, directory):
                    created.append(directory)
            for path in writes:
                current = self.ws.relative(path)
                final = self.pending[path]
                _write_file(self.ws, path, final.data, final.mode)
                done.append(path)
            for path in deletes:
                current = self.ws.relative(path)
                with self.ws.dir_fd(path.parent) as parent:
                    os.unlink(path.name, dir_fd=parent)
                done.append(path)
        except BaseException as exc:
            failed = self.rollback(done, created)
            if not isinstance(exc, OSError):
                raise
            reason = exc.strerror or str(exc)
            if failed:
                raise PatchError(
                    f"could not change {current!r}: {reason}. Restoring the files already "
                    f"changed failed for: {', '.join(failed)}; check them before retrying."
                ) from exc
            raise PatchError(
                f"could not change {current!r}: {reason}. The files already changed were "
                f"restored; no files were changed."
            ) from exc

    def rollback(self, done: list[Path], created: list[Path]) -> list[str]:
        """Restore ``done`` from the originals and remove ``created``; what failed."""
        failed: list[str] = []
        for path in reversed(done):
            try:
                _restore(self.ws, path, self.disk[path])
            except OSError:
                failed.append(self.ws.relative(path))
        for directory in reversed(created):
            # Only if empty: never remove anything that was not ours.
            with contextlib.suppress(OSError), self.ws.dir_fd(directory.parent) as parent:
                os.rmdir(directory.name, dir_fd=parent)
        return failed


def _diff_lines(data: bytes) -> list[str]:
    return text_lines(data.decode("utf-8", errors="replace"))


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _read_state(ws: Workspace, path: Path) -> _State:
    try:
        with ws.dir_fd(path.parent) as parent:
            try:
                st = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                return _ABSENT
            if stat.S_ISDIR(st.st_mode):
                return _State("dir")
            if stat.S_ISLNK(st.st_mode):
                return _State("symlink", target=os.readlink(path.name, dir_fd=parent))
            if not stat.S_ISREG(st.st_mode):
                return _State("other")
            # O_NONBLOCK: should it have become a FIFO meanwhile, don't hang on it.
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode):
                    return _State("other")
                return _State("file", f.read(), stat.S_IMODE(st.st_mode))
    except (FileNotFoundError, NotADirectoryError):
        return _ABSENT  # a parent directory is missing (or is a file)
    except OSError as exc:
        raise PatchError(f"cannot read it: {exc.strerror or exc}", path=ws.relative(path)) from None


def _make_dir(ws: Workspace, directory: Path) -> bool:
    """Create ``directory``; False if something made it meanwhile."""
    with ws.dir_fd(directory.parent) as parent:
        try:
            os.mkdir(directory.name, 0o777, dir_fd=parent)
        except FileExistsError:
            st = os.stat(directory.name, dir_fd=parent, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                raise
            return False
    return True


def _temp_name(name: str) -> str:
    return f".{name[:180]}.{secrets.token_hex(4)}.apply-patch.tmp"


def _write_file(ws: Workspace, path: Path, data: bytes, mode: int | None) -> None:
    """Replace ``path`` with ``data`` atomically: a temp file renamed over it."""
    with ws.dir_fd(path.parent) as parent:
        temp = _temp_name(path.name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        # A new file gets the usual 0o666 minus umask; a replaced one its old mode.
        fd = os.open(temp, flags, 0o666 if mode is None else 0o600, dir_fd=parent)
        try:
            try:
                if mode is not None:
                    os.fchmod(fd, mode & 0o777)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)  # the content is on disk before the name points at it
            finally:
                os.close(fd)
            os.rename(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise


def _restore(ws: Workspace, path: Path, original: _State) -> None:
    if original.kind == "file":
        _write_file(ws, path, original.data, original.mode)
        return
    with ws.dir_fd(path.parent) as parent:
        if original.kind == "absent":
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.name, dir_fd=parent)
        elif original.kind == "symlink":
            temp = _temp_name(path.name)
            os.symlink(original.target, temp, dir_fd=parent)
            try:
                os.rename(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                raise
        else:  # we never change directories or special files
            raise OSError(errno.EINVAL, "cannot restore", str(path))


# --- entry points -------------------------------------------------------------------


def apply_patch(text: str, workspace: Workspace) -> PatchResult:
    """Apply ``text`` to the files of ``workspace``, all or nothing.

    Raises :class:`PatchError` (and then no file was changed) if the patch does
    not parse or any of its changes does not apply.
    """
    try:
        plan = plan_patch(text, workspace)
    except PatchError as exc:
        raise _nothing_changed(exc) from None
    plan.commit()  # its errors say themselves whether the rollback worked
    return PatchResult(tuple(plan.changes))


def _nothing_changed(exc: PatchError) -> PatchError:
    if _NOTHING_CHANGED in exc.message or "restored" in exc.message:
        return exc  # a failed write says itself what became of the files
    return PatchError(f"{exc.message}\n{_NOTHING_CHANGED}", path=exc.path, line=exc.line)


def open_documents(text: str, workspace: Workspace, files: Files) -> dict[Path, OpenText]:
    """The documents open in the editor among the files a patch names."""
    paths: list[Path] = []
    for raw in affected_paths(text):
        with contextlib.suppress(PathOutsideWorkspace, ValueError, RuntimeError, OSError):
            paths.append(workspace.resolve(raw))
    return files.documents(paths) if paths else {}


def plan_patch(
    text: str, workspace: Workspace, documents: Mapping[Path, OpenText] | None = None
) -> _Plan:
    """The patch resolved against the files (and the editor's ``documents``),
    in memory: nothing is written. Raises :class:`PatchError` if it does not
    parse or apply."""
    patch = parse_patch(text)
    if not patch.hunks:
        raise PatchError(
            "the patch is empty: it has no '*** Add File:', "
            "'*** Delete File:' or '*** Update File:' section"
        )
    plan = _Plan(workspace, documents)
    for hunk in patch.hunks:
        if hunk.kind == "add":
            plan.add(hunk)
        elif hunk.kind == "delete":
            plan.delete(hunk)
        else:
            plan.update(hunk)
    return plan


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
                note = await ctx.files.apply(plan.edit())
            except PatchError as exc:
                return ToolResult.error(str(_nothing_changed(exc)))
            except EditRefused as exc:
                return ToolResult.error(f"{exc}\n{_NOTHING_CHANGED}")
            diff = await anyio.to_thread.run_sync(plan.diff)
        output = PatchResult(tuple(plan.changes)).summary()
        return ToolResult(output=f"{output}\n{note}" if note else output, diff=diff or None)
