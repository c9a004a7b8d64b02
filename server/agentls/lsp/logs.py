"""Logging: stderr (or a file) for the operator, ``window/logMessage`` for the user.

In stdio mode stdout carries the protocol, so nothing else may ever write
there. Neovim logs every stderr line at ERROR, so stderr stays at WARNING
unless asked otherwise.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable

from lsprotocol import types as lsp

from agentls.config import api_key
from agentls.redaction import redact

_LEVELS = {
    logging.ERROR: lsp.MessageType.Error,
    logging.WARNING: lsp.MessageType.Warning,
    logging.INFO: lsp.MessageType.Info,
    logging.DEBUG: lsp.MessageType.Log,
}


def configure(level: str = "WARNING", log_file: str | None = None) -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8")
        if log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(api_key()))
    handler.setLevel(numeric)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    # Our own INFO records go on to the editor (window/logMessage) whatever
    # the stderr level is; the stderr handler filters by its own level.
    logging.getLogger("agentls").setLevel(min(numeric, logging.INFO))
    # pygls logs every message body at INFO; only show that when debugging.
    logging.getLogger("pygls").setLevel(
        max(numeric, logging.WARNING) if numeric > logging.DEBUG else numeric
    )


class RedactingFilter(logging.Filter):
    """Blanks the API key (and anything key-shaped) out of every record, whoever
    logged it — the SDK and the HTTP library included, at any level."""

    def __init__(self, secret: str | None) -> None:
        super().__init__()
        self._secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, self._secret)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class ClientLogHandler(logging.Handler):
    """Forwards ``agentls`` log records to the editor as ``window/logMessage``."""

    def __init__(
        self, send: Callable[[lsp.LogMessageParams], None], secret: Callable[[], str | None]
    ):
        super().__init__(logging.INFO)
        self._send = send
        self._secret = secret
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False) or not record.name.startswith("agentls"):
            return
        self._local.busy = True  # sending may log: never recurse
        try:
            message = redact(self.format(record), self._secret())
            self._send(
                lsp.LogMessageParams(
                    type=_LEVELS.get(record.levelno, lsp.MessageType.Log), message=message
                )
            )
        except Exception:
            pass
        finally:
            self._local.busy = False
