"""Finding the lines a change replaces: Codex's ``seek_sequence``, strictest
match first, then ever more tolerant of whitespace and typographic punctuation."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
