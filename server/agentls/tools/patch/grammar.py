"""The patch grammar: ``*** Begin Patch`` text parsed into hunks and chunks,
leniently as Codex does, without touching any file."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from agentls.tools.patch.errors import PatchError

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
_HUNK_HEADERS = (ADD_FILE, DELETE_FILE, UPDATE_FILE)

ChangeKind = Literal["add", "delete", "update"]
Op = Literal[" ", "-", "+"]


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
