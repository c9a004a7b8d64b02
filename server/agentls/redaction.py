"""Keeping the API key out of everything we show or log.

Runs on every log record, so it must stay linear in the text's length: a
pattern like ``\\S*tail`` would backtrack quadratically over a long run of
non-space characters (a 1 MB parameter, say) and stall the server.
"""

from __future__ import annotations

import re

_KEY_LIKE = re.compile(r"\b(?:sk|rk|pk)-[\w*\-.]{4,}")


def redact(text: str, secret: str | None) -> str:
    """``text`` with the secret, and anything shaped like an API key, blanked out."""
    if secret:
        text = text.replace(secret, "[redacted]")
        if len(secret) >= 12:
            # Masked echoes such as "sk-...****abcd" keep the key's ends.
            text = _blank_words_ending(text, secret[-4:])
    return _KEY_LIKE.sub("[redacted]", text)


def _blank_words_ending(text: str, tail: str) -> str:
    """Replace every whitespace-delimited word ending in ``tail`` (at a word
    boundary) with ``[redacted]``, in one left-to-right pass."""
    if tail not in text:
        return text
    out: list[str] = []
    done = 0  # text[:done] is already in ``out``
    position = text.find(tail)
    while position >= 0:
        end = position + len(tail)
        if end < len(text) and (text[end].isalnum() or text[end] == "_"):
            position = text.find(tail, end)  # not at a word boundary
            continue
        start = position
        while start > done and not text[start - 1].isspace():
            start -= 1
        out.append(text[done:start])
        out.append("[redacted]")
        done = end
        position = text.find(tail, end)
    out.append(text[done:])
    return "".join(out)


def redact_secret(text: str, secret: str | None) -> str:
    """``text`` with exactly the secret blanked out (tool output: anything
    merely key-shaped there is the user's own data, not ours to hide)."""
    return text.replace(secret, "[redacted]") if secret else text


class StreamRedactor:
    """Blanks the secret out of a stream of text that may split it anywhere:
    the end of each piece that could be the start of the secret is held back
    until the next piece (or ``flush``) shows what it is."""

    __slots__ = ("_pending", "_secret")

    def __init__(self, secret: str | None) -> None:
        self._secret = secret or ""
        self._pending = ""

    def feed(self, text: str) -> str:
        secret = self._secret
        if not secret:
            return text
        text = (self._pending + text).replace(secret, "[redacted]")
        for size in range(min(len(secret) - 1, len(text)), 0, -1):
            if text.endswith(secret[:size]):
                self._pending = text[-size:]
                return text[:-size]
        self._pending = ""
        return text

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        return rest
