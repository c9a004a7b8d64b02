"""Applying LSP ``TextEdit``s to a text as an editor does (UTF-16 columns):
what the test and benchmark clients do with the server's
``workspace/applyEdit``."""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from agentls.text import text_lines


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _offset(text: str, lines: list[str], starts: list[int], position: dict[str, int]) -> int:
    """The index in ``text`` of an LSP position (UTF-16 columns)."""
    line, character = position["line"], position["character"]
    if line >= len(lines):
        return len(text)
    body = lines[line].rstrip("\r\n")
    column = 0
    for index, char in enumerate(body):
        if column >= character:
            return starts[line] + index
        column += _units(char)
    return starts[line] + len(body)


def apply_text_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """``text`` with ``edits`` (JSON ``TextEdit``s, not overlapping) applied."""
    lines = text_lines(text)
    starts = list(accumulate((len(line) for line in lines), initial=0))
    spans = [
        (
            _offset(text, lines, starts, e["range"]["start"]),
            _offset(text, lines, starts, e["range"]["end"]),
            e["newText"],
        )
        for e in edits
    ]
    pieces: list[str] = []
    end = len(text)
    for start, stop, new in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        pieces += [text[stop:end], new]
        end = start
    pieces.append(text[:end])
    return "".join(reversed(pieces))


__all__ = ["apply_text_edits"]
