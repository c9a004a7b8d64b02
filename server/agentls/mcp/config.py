"""Where MCP servers are configured, and what a configuration entry means.

Three sources, in this order of precedence (a name taken by an earlier source
is not taken again by a later one):

1. ``initializationOptions.mcpServers`` (the editor's settings);
2. the user's ``$XDG_CONFIG_HOME/agentls/mcp.json`` (``~/.config/agentls``);
3. the project's ``.mcp.json`` in the workspace folder — its servers start
   only once the user has allowed each of them (``consent``).

Every source has the common shape ``{"mcpServers": {NAME: ENTRY}}`` (the
option holds the inner object). An entry is a stdio server
``{"command", "args"?, "env"?}`` or a streamable HTTP server
``{"type": "http", "url", "headers"?}``; ``${VAR}`` and ``${VAR:-default}``
in any of these strings are taken from the server's environment. A bad entry
never stops the others: it becomes a server that failed, saying why.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Source = Literal["options", "user", "project"]
TransportKind = Literal["stdio", "http"]

USER_FILE = "mcp.json"
PROJECT_FILE = ".mcp.json"
_KNOWN_KEYS = frozenset({"type", "command", "args", "env", "url", "headers"})
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/agentls``, by default ``~/.config/agentls``."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentls"


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$AGENTLS_STATE_DIR``, else ``$XDG_STATE_HOME/agentls`` (``~/.local/state/agentls``)."""
    env = os.environ if env is None else env
    override = env.get("AGENTLS_STATE_DIR")
    if override:
        return Path(override)
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "agentls"


@dataclass(frozen=True, slots=True)
class StdioTarget:
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HttpTarget:
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One configured server. ``target`` is None when the entry cannot be
    used; ``error`` then says why."""

    name: str
    source: Source
    # The entry as written (variables not expanded): what the user is asked
    # about, and what their answer is remembered for.
    raw: Any
    target: StdioTarget | HttpTarget | None
    error: str | None = None
    # Things the user should know that do not stop the server (unknown keys).
    notes: tuple[str, ...] = ()

    @property
    def transport(self) -> TransportKind:
        if isinstance(self.target, HttpTarget):
            return "http"
        if self.target is None and isinstance(self.raw, dict) and "url" in self.raw:
            return "http"
        return "stdio"

    @property
    def command_line(self) -> str | None:
        """The command as a shell would show it (never the environment)."""
        if isinstance(self.target, StdioTarget):
            return shlex.join([self.target.command, *self.target.args])
        return None

    @property
    def url(self) -> str | None:
        """The URL (never the headers: they usually carry a token)."""
        return self.target.url if isinstance(self.target, HttpTarget) else None

    def fingerprint(self) -> str:
        """Changes whenever the entry does: a changed project entry is asked about again."""
        text = json.dumps(self.raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class Configuration:
    servers: list[ServerSpec] = field(default_factory=list)
    # Problems with a whole source (an unreadable file), said to the user.
    problems: list[str] = field(default_factory=list)


class _EntryError(ValueError):
    pass


def _expand(text: str, env: Mapping[str, str], where: str) -> str:
    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise _EntryError(f"{where}: the environment variable {name} is not set")
            return default
        return value

    return _VARIABLE.sub(substitute, text)


def _string(entry: dict[str, Any], key: str, env: Mapping[str, str]) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _EntryError(f"{key!r} must be a non-empty string")
    return _expand(value, env, key)


def _strings(entry: dict[str, Any], key: str, env: Mapping[str, str]) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _EntryError(f"{key!r} must be an array of strings")
    return tuple(_expand(v, env, f"{key}[{i}]") for i, v in enumerate(value))


def _mapping(entry: dict[str, Any], key: str, env: Mapping[str, str]) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _EntryError(f"{key!r} must be an object of strings")
    return {str(k): _expand(v, env, f"{key}.{k}") for k, v in value.items()}


def _target(entry: Any, env: Mapping[str, str]) -> StdioTarget | HttpTarget:
    if not isinstance(entry, dict):
        raise _EntryError("the entry must be an object")
    kind = entry.get("type")
    if kind is None:
        if "command" in entry:
            kind = "stdio"
        elif "url" in entry:
            kind = "http"
        else:
            raise _EntryError('it needs a "command" (a stdio server) or a "url" (an HTTP server)')
    if kind == "stdio":
        command = _string(entry, "command", env)
        return StdioTarget(command, _strings(entry, "args", env), _mapping(entry, "env", env))
    if kind in ("http", "streamable-http"):
        url = _string(entry, "url", env)
        if not url.startswith(("http://", "https://")):
            raise _EntryError(f"the url must start with http:// or https://, not {url!r}")
        return HttpTarget(url, _mapping(entry, "headers", env))
    if kind == "sse":
        raise _EntryError(
            "the SSE transport is not supported: use the server's streamable HTTP endpoint "
            '("type": "http")'
        )
    raise _EntryError(f'unknown "type" {kind!r}: expected "stdio" or "http"')


def parse_entry(name: str, entry: Any, source: Source, env: Mapping[str, str]) -> ServerSpec:
    """One entry of ``mcpServers``; a bad one comes back with its ``error``."""
    if not name.strip():
        return ServerSpec(name, source, entry, None, "a server needs a non-empty name")
    try:
        target = _target(entry, env)
    except _EntryError as exc:
        return ServerSpec(name, source, entry, None, f"invalid configuration: {exc}")
    unknown = sorted(set(entry) - _KNOWN_KEYS) if isinstance(entry, dict) else []
    notes = tuple(f"unknown key {key!r} ignored" for key in unknown)
    return ServerSpec(name, source, entry, target, notes=notes)


def _read(path: Path, problems: list[str]) -> dict[str, Any]:
    """The ``mcpServers`` object of a file, or {} (with the problem said) if unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeError) as exc:
        problems.append(f"{path}: cannot be read ({exc})")
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        problems.append(f"{path}: not valid JSON ({exc})")
        return {}
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        problems.append(f'{path}: expected {{"mcpServers": {{NAME: {{...}}}}}}')
        return {}
    return servers


def load(
    options: Any,
    workspace: Path,
    *,
    env: Mapping[str, str] | None = None,
) -> Configuration:
    """Every configured server, the three sources merged (see the module)."""
    env = os.environ if env is None else env
    config = Configuration()
    sources: list[tuple[Source, str, dict[str, Any]]] = []
    if isinstance(options, dict):
        sources.append(("options", "initializationOptions.mcpServers", options))
    elif options is not None:
        config.problems.append("initializationOptions.mcpServers must be an object")
    user = config_dir(env) / USER_FILE
    sources.append(("user", str(user), _read(user, config.problems)))
    project = workspace / PROJECT_FILE
    sources.append(("project", str(project), _read(project, config.problems)))
    taken: dict[str, str] = {}
    for source, where, servers in sources:
        for name, entry in servers.items():
            if name in taken:
                config.problems.append(
                    f"{where}: the server {name!r} is ignored: {taken[name]} already has one "
                    "of that name"
                )
                continue
            taken[name] = where
            config.servers.append(parse_entry(name, entry, source, env))
    return config
