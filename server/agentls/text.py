"""Text that can always be encoded, and text as an editor splits it into lines."""

from __future__ import annotations

import re

# The line endings of the Language Server Protocol (and of every editor): not
# str.splitlines, which also splits at form feeds, U+2028 and others.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def text_lines(text: str) -> list[str]:
    """``text`` as lines with their endings, split where LSP splits lines."""
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(keepends=True)  # the same split, at C speed
    return _LINE.findall(text)


def valid_unicode(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD.

    JSON can carry lone surrogates (``"\\ud800"``) that no UTF-8 encoder
    accepts: a prompt carrying one would fail at the model request, and — kept
    in the conversation — every turn after it.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
