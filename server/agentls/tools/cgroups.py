"""A cgroup per command, where the system lets us make one.

No process can leave a cgroup on its own — not by ``setsid``, not by a double
fork, not by clearing its environment — so a command started inside one can be
found and killed completely, atomically (``cgroup.kill``, Linux 5.14+; older
kernels: freeze, kill, thaw). Creating cgroups needs a writable cgroup v2
hierarchy (root, or a systemd-delegated slice); where we have none, the
process-tree sweep in ``processes.py`` does the job alone.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import os
import signal
import time
from pathlib import Path

from agentls.tools.proctable import owner_alive, server_identity

log = logging.getLogger(__name__)

_counter = itertools.count(1)
_base: Path | None = None
_probed = False


def _v2_root() -> Path | None:
    """Our own cgroup in the v2 hierarchy, if it is mounted and we may write there."""
    try:
        mount = next(
            Path(line.split()[4])
            for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if " - cgroup2 " in line
        )
        own = next(
            line.split("::", 1)[1]
            for line in Path("/proc/self/cgroup").read_text().splitlines()
            if line.startswith("0::")
        )
    except (OSError, StopIteration, IndexError):
        return None
    path = mount / own.strip().lstrip("/")
    return path if os.access(path, os.W_OK) else None


def _base_dir() -> Path | None:
    """``<our cgroup>/agentls-<pid>.<start>``, made once per process (None if impossible)."""
    global _base, _probed
    if not _probed:
        _probed = True
        if os.environ.get("AGENTLS_CGROUPS", "").lower() in ("0", "off", "no"):
            return None  # turned off: the process-tree sweep alone
        root = _v2_root()
        if root is not None:
            # Named after this server's pid and start time: a later server
            # tells from the name whether its owner still runs (``sweep_stale``).
            candidate = root / f"agentls-{server_identity()}"
            try:
                candidate.mkdir(exist_ok=True)
                _base = candidate
                atexit.register(cleanup)
            except OSError as exc:
                log.info("no cgroups for commands (%s); using the process-tree sweep", exc)
    return _base


def available() -> bool:
    """Whether commands get cgroups here."""
    return _base_dir() is not None


class CommandCgroup:
    """The cgroup one command runs in."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls) -> CommandCgroup | None:
        base = _base_dir()
        if base is None:
            return None
        path = base / f"cmd-{next(_counter)}"
        try:
            path.mkdir()
        except OSError:
            return None
        return cls(path)

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    def add(self, pid: int) -> bool:
        """Move a process in from outside (a sandboxed command's leader, by its
        real pid, before it is let run); False if the system refused."""
        try:
            with open(self.procs_file, "w") as f:
                f.write(str(pid))
        except OSError as exc:
            log.info("could not move %d into %s: %s", pid, self.path, exc)
            return False
        return True

    def pids(self) -> set[int]:
        try:
            return {int(line) for line in (self.path / "cgroup.procs").read_text().split()}
        except (OSError, ValueError):
            return set()

    def kill(self) -> None:
        """Kill every process in the cgroup, including ones forked while we do it."""
        kill_file = self.path / "cgroup.kill"
        if kill_file.exists():
            with contextlib.suppress(OSError):
                kill_file.write_text("1")
                return
        freeze = self.path / "cgroup.freeze"
        with contextlib.suppress(OSError):
            freeze.write_text("1")
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            freeze.write_text("0")

    def remove(self) -> bool:
        """Remove the (empty) cgroup; False while processes are still in it."""
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True


def cleanup() -> None:
    """Remove our base cgroup at exit (it is empty once every command is gone)."""
    if _base is not None:
        for child in _base.glob("cmd-*"):
            with contextlib.suppress(OSError):
                child.rmdir()
        with contextlib.suppress(OSError):
            _base.rmdir()


def sweep_stale() -> int:
    """Kill and remove what servers that died without cleaning up left in
    their cgroups; how many cgroups were removed. Runs once at start-up."""
    root = _v2_root()
    if root is None or os.environ.get("AGENTLS_CGROUPS", "").lower() in ("0", "off", "no"):
        return 0
    removed = 0
    for base in root.glob("agentls-*"):
        identity = base.name.removeprefix("agentls-")
        if "." not in identity or owner_alive(identity):
            continue  # alive, or not named the way we name ours
        for child in base.glob("cmd-*"):
            CommandCgroup(child).kill()
            for _ in range(100):  # the kill is asynchronous: the cgroup empties shortly
                if CommandCgroup(child).remove():
                    break
                time.sleep(0.01)
        with contextlib.suppress(OSError):
            base.rmdir()
            removed += 1
    if removed:
        log.info("removed %d cgroup(s) left behind by servers that died", removed)
    return removed
