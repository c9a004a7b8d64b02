"""Project instructions: the ``AGENTS.md`` files the model is told to follow.

In this order: the user's own ``$XDG_CONFIG_HOME/agentls/AGENTS.md`` (default
``~/.config/agentls/AGENTS.md``), then every ``AGENTS.md`` from the root of the
repository (the nearest enclosing directory with a ``.git``) down to the
workspace folder. Each comes under a heading naming its path (relative to the
repository root; the global one as ``~/…``). At most 32 KiB in all: the
beginning is kept and the cut is said. Read when a session starts and again
after a compaction.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

FILENAME = "AGENTS.md"
MAX_BYTES = 32 * 1024


@dataclass(frozen=True, slots=True)
class ProjectFile:
    # As the model and the user see it: "AGENTS.md", "pkg/AGENTS.md", "~/.config/agentls/AGENTS.md".
    path: str
    bytes: int


@dataclass(frozen=True, slots=True)
class ProjectDocs:
    """The instructions text (headings included) and where it came from."""

    text: str = ""
    files: tuple[ProjectFile, ...] = field(default=())
    # Bytes cut away to stay within MAX_BYTES (0: nothing was cut).
    cut: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)


def config_home(env: dict[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/agentls`` (default ``~/.config/agentls``)."""
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path(env.get("HOME") or Path.home()) / ".config"
    return root / "agentls"


def repository_root(folder: Path) -> Path | None:
    """The nearest directory at or above ``folder`` holding a ``.git`` (a
    directory, or the file of a worktree or submodule)."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _display(path: Path, home: Path) -> str:
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


def candidates(workspace: Path, env: dict[str, str] | None = None) -> list[tuple[str, Path]]:
    """Where instructions may be, in order, each with its displayed name."""
    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or Path.home())
    found: list[tuple[str, Path]] = []
    global_file = config_home(env) / FILENAME
    found.append((_display(global_file, home), global_file))
    root = repository_root(workspace)
    if root is None:
        found.append((FILENAME, workspace / FILENAME))
        return found
    folders = [workspace, *workspace.parents]
    for folder in reversed(folders[: folders.index(root) + 1]):
        relative = folder.relative_to(root).as_posix()
        name = FILENAME if relative == "." else f"{relative}/{FILENAME}"
        found.append((name, folder / FILENAME))
    return found


def load(workspace: Path, env: dict[str, str] | None = None) -> ProjectDocs:
    """Read the instructions that apply to ``workspace`` now."""
    sections: list[str] = []
    files: list[ProjectFile] = []
    for name, path in candidates(workspace, env):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc.strerror or exc)
            continue
        text = data.decode("utf-8", errors="replace").strip()
        if not text:
            continue
        files.append(ProjectFile(name, len(data)))
        sections.append(f"## {name}\n\n{text}")
    whole = "\n\n".join(sections)
    encoded = whole.encode("utf-8")
    cut = 0
    if len(encoded) > MAX_BYTES:
        cut = len(encoded) - MAX_BYTES
        kept = encoded[:MAX_BYTES].decode("utf-8", errors="ignore")
        whole = (
            f"{kept}\n\n[… the last {cut} bytes of the project instructions were cut: "
            f"they may be {MAX_BYTES // 1024} KiB at most]"
        )
    return ProjectDocs(whole, tuple(files), cut)
