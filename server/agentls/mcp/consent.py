"""Whether the user allowed a project's MCP servers to start.

A project's ``.mcp.json`` comes with the repository, so whoever wrote it
chooses the command: a server from it starts only after the user has allowed
that server, in that project, with that exact configuration. The answer
(allow or deny) is remembered per project in the state folder
(``$AGENTLS_STATE_DIR``, else ``$XDG_STATE_HOME/agentls``), file
``mcp-consent.json``, until the entry changes or the user revokes it
(``agent/mcpRevoke``). Who is asked is the ``ConsentAsker`` the server layer
gives us (the editor).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from agentls.mcp.config import ServerSpec

log = logging.getLogger(__name__)

FILE = "mcp-consent.json"
Decision = Literal["allow", "deny"]


@dataclass(frozen=True, slots=True)
class ConsentRequest:
    """What the user is asked about: one server of a project's ``.mcp.json``."""

    server: str
    project_file: str
    command: str | None = None
    url: str | None = None

    @classmethod
    def of(cls, spec: ServerSpec, project_file: Path) -> ConsentRequest:
        return cls(spec.name, str(project_file), spec.command_line, spec.url)

    def question(self) -> str:
        what = f"run `{self.command}`" if self.command else f"connect to {self.url}"
        return (
            f"{self.project_file} asks to start the MCP server {self.server!r}: it would "
            f"{what} as you, outside the sandbox, and its tools could be called by the agent. "
            "Allow it?"
        )


class ConsentAsker(Protocol):
    async def __call__(self, request: ConsentRequest) -> bool | None:
        """True if allowed, False if denied, None if no answer came (the
        question was dismissed, or the editor cannot ask)."""
        ...


class ConsentStore:
    """The decisions about one project's servers (the file is shared by all projects)."""

    def __init__(self, state: Path, project: Path) -> None:
        self.path = state / FILE
        self._project = str(project.resolve())

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("%s is unreadable (%s): asking about project servers again", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def _entries(self, data: dict[str, Any]) -> dict[str, Any]:
        projects = data.get("projects")
        entries = projects.get(self._project) if isinstance(projects, dict) else None
        return entries if isinstance(entries, dict) else {}

    def decision(self, spec: ServerSpec) -> Decision | None:
        """What the user decided about this server as it is configured now."""
        entry = self._entries(self._load()).get(spec.name)
        if not isinstance(entry, dict) or entry.get("fingerprint") != spec.fingerprint():
            return None
        decision = entry.get("decision")
        return decision if decision in ("allow", "deny") else None

    def remember(self, spec: ServerSpec, decision: Decision) -> None:
        data = self._load()
        entries = self._entries(data)
        entries[spec.name] = {
            "decision": decision,
            "fingerprint": spec.fingerprint(),
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self._save(data, entries)

    def forget(self, names: Iterable[str]) -> list[str]:
        """Forget the decisions about these servers; the names that had one."""
        data = self._load()
        entries = self._entries(data)
        forgotten = [name for name in names if entries.pop(name, None) is not None]
        if forgotten:
            self._save(data, entries)
        return forgotten

    def _save(self, data: dict[str, Any], entries: dict[str, Any]) -> None:
        projects = data.get("projects")
        if not isinstance(projects, dict):
            projects = data["projects"] = {}
        if entries:
            projects[self._project] = entries
        else:
            projects.pop(self._project, None)
        data["version"] = 1
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Atomic: a crash mid-write leaves the old file, never half of one.
        fd, tmp = tempfile.mkstemp(prefix=".mcp-consent-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=2, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
