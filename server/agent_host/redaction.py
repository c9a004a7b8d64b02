"""Keeping the API key out of everything we show or log."""

from __future__ import annotations

import re

_KEY_LIKE = re.compile(r"\b(?:sk|rk|pk)-[\w*\-.]{4,}")


def redact(text: str, secret: str | None) -> str:
    """``text`` with the secret, and anything shaped like an API key, blanked out."""
    if secret:
        text = text.replace(secret, "[redacted]")
        if len(secret) >= 12:
            # Masked echoes such as "sk-...****abcd" keep the key's ends.
            text = re.sub(r"\S*" + re.escape(secret[-4:]) + r"\b", "[redacted]", text)
    return _KEY_LIKE.sub("[redacted]", text)
