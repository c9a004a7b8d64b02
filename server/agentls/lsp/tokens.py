"""The token a ``--tcp`` or ``--ws`` client must present.

Always required on those transports: any local process (or, for WebSocket,
any web page the user opens) can connect to a loopback port. The user gives
it in a file (``--token-file``) or ``$AGENTLS_TOKEN`` — never on the command
line, where every process can read it; otherwise one is generated and written,
readable by the user alone, to ``<state folder>/tokens/<scheme>-<port>.token``
(removed when the server exits).
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from pathlib import Path

from agentls.config import scrub_environment
from agentls.state_dir import state_dir

TOKEN_VARIABLE = "AGENTLS_TOKEN"


class TokenError(ValueError):
    pass


def given_token(token_file: str | None) -> str | None:
    """The token the user chose (``--token-file``, then ``$AGENTLS_TOKEN``)."""
    if token_file is not None:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise TokenError(f"cannot read the token file {token_file}: {exc.strerror}") from exc
        if not token:
            raise TokenError(f"the token file {token_file} is empty")
        return token
    from_environment = os.environ.get(TOKEN_VARIABLE) or None
    # Like the API key: out of our environment, so no command can read it there.
    scrub_environment(TOKEN_VARIABLE)
    return from_environment


def generate() -> str:
    return secrets.token_urlsafe(32)


def publish(token: str, scheme: str, port: int) -> Path:
    """Write a generated token where the user's clients can read it (0600)."""
    folder = state_dir() / "tokens"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{scheme}-{port}.token"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale one, perhaps with other permissions
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    return path


def matches(given: object, expected: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode(), expected.encode())
