"""Where sessions live: ``$AGENTLS_STATE_DIR``, else ``$XDG_STATE_HOME/agentls``,
else ``~/.local/state/agentls``; one folder per workspace under ``sessions/``."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path


def state_root(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    explicit = env.get("AGENTLS_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = env.get("XDG_STATE_HOME")
    # The XDG spec: a relative path is invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "agentls"


def workspace_folder(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    """The folder of one workspace's sessions: its name (for people) and a
    hash of its full path (so that two ``app`` folders never share one)."""
    resolved = workspace.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", resolved.name)[:40].strip("._") or "root"
    return state_root(env) / "sessions" / f"{name}-{digest}"


def runtime_folder(env: Mapping[str, str] | None = None) -> Path:
    """Where the sockets of long-lived servers are (``serve --listen``): the
    user's ``$XDG_RUNTIME_DIR/agentls``, else ``/tmp/agentls-UID``."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / "agentls"
    return Path("/tmp") / f"agentls-{os.getuid()}"


def socket_path(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    """The socket of the server of one workspace (short: a socket path is at most ~100 bytes)."""
    resolved = workspace.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return runtime_folder(env) / f"{digest}.sock"
