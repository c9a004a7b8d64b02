"""Which runs of whole lines changed between two texts.

``difflib.SequenceMatcher`` alone costs ~9 ms on a 5,000-line file, paid on
every patch that goes to the editor as ``workspace/applyEdit``. A patch
changes a few places of a long file, so the lines that occur once in both
texts, in order (patience diff's anchors), cut the file into short gaps; only
those gaps go through ``SequenceMatcher``. Any alignment gives edits that are
correct; the anchors keep them as small as the patch.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise


@dataclass(frozen=True, slots=True)
class LineChange:
    """Lines ``start`` up to ``end`` (0-based, end excluded) become ``text``."""

    start: int
    end: int
    text: str


def changed_runs(old: Sequence[str], new: Sequence[str]) -> list[LineChange]:
    """The runs of ``old`` to replace, in order, to make ``new``."""
    out: list[LineChange] = []
    a0, a1, b0, b1 = _trim(old, 0, len(old), new, 0, len(new))
    start_a, start_b = a0, b0
    for i, j in _anchors(old, a0, a1, new, b0, b1):
        _gap(old, start_a, i, new, start_b, j, out)
        start_a, start_b = i + 1, j + 1
    _gap(old, start_a, a1, new, start_b, b1, out)
    return out


def _trim(
    old: Sequence[str], a0: int, a1: int, new: Sequence[str], b0: int, b1: int
) -> tuple[int, int, int, int]:
    """Without the lines both ends have in common."""
    while a0 < a1 and b0 < b1 and old[a0] == new[b0]:
        a0, b0 = a0 + 1, b0 + 1
    while a0 < a1 and b0 < b1 and old[a1 - 1] == new[b1 - 1]:
        a1, b1 = a1 - 1, b1 - 1
    return a0, a1, b0, b1


def _anchors(
    old: Sequence[str], a0: int, a1: int, new: Sequence[str], b0: int, b1: int
) -> list[tuple[int, int]]:
    """Lines found exactly once in each range, the longest run of them in the
    same order in both (patience sorting)."""
    once_old = _once(old, a0, a1)
    once_new = _once(new, b0, b1)
    # In the order of ``old`` (dicts keep the order lines were first seen).
    pairs = [(i, once_new[line]) for line, i in once_old.items() if line in once_new]
    news = [j for _, j in pairs]
    if all(x < y for x, y in pairwise(news)):
        return pairs  # nothing moved: every anchor keeps its order (the usual patch)
    # Longest increasing subsequence of the new positions.
    tails: list[int] = []  # smallest ending new-position of a run of each length
    tail_at: list[int] = []  # index into pairs of that run's end
    back: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        n = bisect_left(tails, j)
        if n == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[n] = j
            tail_at[n] = k
        back[k] = tail_at[n - 1] if n else -1
    chain: list[tuple[int, int]] = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    chain.reverse()
    return chain


def _once(lines: Sequence[str], lo: int, hi: int) -> dict[str, int]:
    seen: dict[str, int] = {}
    twice: set[str] = set()
    for i in range(lo, hi):
        line = lines[i]
        if line in seen:
            twice.add(line)
        else:
            seen[line] = i
    for line in twice:
        del seen[line]
    return seen


def _gap(
    old: Sequence[str],
    a0: int,
    a1: int,
    new: Sequence[str],
    b0: int,
    b1: int,
    out: list[LineChange],
) -> None:
    a0, a1, b0, b1 = _trim(old, a0, a1, new, b0, b1)
    if a0 == a1 or b0 == b1:
        if a0 != a1 or b0 != b1:
            out.append(LineChange(a0, a1, "".join(new[b0:b1])))
        return
    matcher = SequenceMatcher(None, old[a0:a1], new[b0:b1], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            out.append(LineChange(a0 + i1, a0 + i2, "".join(new[b0 + j1 : b0 + j2])))
