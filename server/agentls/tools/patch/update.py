"""The new text of an updated file: each ``@@`` chunk sought in the old text
and replaced, keeping the file's own line endings."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentls.tools.patch.errors import PatchError
from agentls.tools.patch.grammar import Op, UpdateChunk
from agentls.tools.patch.seek import seek_sequence

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


def apply_chunks(text: str, chunks: Sequence[UpdateChunk], path: str) -> str:
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
