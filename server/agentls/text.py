"""Text that can always be encoded."""

from __future__ import annotations


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
