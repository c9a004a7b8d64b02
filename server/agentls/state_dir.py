"""Where agentls keeps its state: ``$AGENTLS_STATE_DIR``, else
``$XDG_STATE_HOME/agentls``, else ``~/.local/state/agentls``."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    override = os.environ.get("AGENTLS_STATE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "agentls"
