"""What the system tells us about processes: ``/proc`` where there is one,
signals alone where there is not (macOS).

The process-tree sweep (``processes.py``) asks a ``ProcessTable``. With
``/proc`` it sees every process: parent, group, session, start time,
environment. Without it, all that is left is ``kill(pid, 0)`` and
``killpg(pgid, 0)``: whether a process, or any process of a group, still
exists. The table is chosen once per server (``default_table``) and can be
given explicitly, which is how the tests run the ``/proc``-less path on Linux.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    zombie: bool
    start: int  # clock ticks after boot


class ProcessTable(Protocol):
    # False where processes cannot be listed (no /proc): only signals work.
    enumerable: bool

    def read(self, pid: int) -> ProcInfo | None: ...

    def all(self) -> dict[int, ProcInfo]: ...

    def has_marker(self, pid: int, marker: bytes) -> bool: ...

    def alive(self, pid: int) -> bool: ...

    def group_alive(self, pgid: int) -> bool: ...


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it just is not ours any more
    return True


class ProcTable:
    """Linux: everything from ``/proc``."""

    enumerable = True

    def __init__(self, root: str = "/proc") -> None:
        self._root = root

    def read(self, pid: int) -> ProcInfo | None:
        try:
            with open(f"{self._root}/{pid}/stat", "rb") as f:
                data = f.read()
        except OSError:
            return None
        # The command name may contain spaces and parentheses: split after the last ')'.
        fields = data[data.rindex(b")") + 2 :].split()
        return ProcInfo(
            pid,
            int(fields[1]),
            int(fields[2]),
            int(fields[3]),
            fields[0] in (b"Z", b"X"),
            int(fields[19]),
        )

    def all(self) -> dict[int, ProcInfo]:
        found: dict[int, ProcInfo] = {}
        for name in os.listdir(self._root):
            if name.isdigit():
                proc = self.read(int(name))
                if proc is not None:
                    found[proc.pid] = proc
        return found

    def has_marker(self, pid: int, marker: bytes) -> bool:
        try:
            with open(f"{self._root}/{pid}/environ", "rb") as f:
                return marker in f.read()
        except OSError:
            return False

    def alive(self, pid: int) -> bool:
        proc = self.read(pid)
        return proc is not None and not proc.zombie

    def group_alive(self, pgid: int) -> bool:
        return _group_alive(pgid)


class SignalTable:
    """No ``/proc`` (macOS, BSD): processes cannot be listed or inspected.

    What still works: a process group is signalled as a whole, and
    ``killpg(pgid, 0)`` says whether any of its processes is left. A child that
    leaves its group (``setsid``) cannot be found — docs/security.md says so.
    A zombie counts as alive here (its exit status is the event loop's to reap).
    """

    enumerable = False

    def read(self, pid: int) -> ProcInfo | None:
        return None

    def all(self) -> dict[int, ProcInfo]:
        return {}

    def has_marker(self, pid: int, marker: bytes) -> bool:
        return False

    def alive(self, pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def group_alive(self, pgid: int) -> bool:
        return _group_alive(pgid)


_default: ProcessTable | None = None
_identity: str | None = None


def default_table() -> ProcessTable:
    """``/proc`` if this system has one, else signals alone (chosen once)."""
    global _default
    if _default is None:
        with contextlib.suppress(OSError):
            if os.path.isfile("/proc/self/stat"):
                _default = ProcTable()
        if _default is None:
            _default = SignalTable()
    return _default


def server_identity() -> str:
    """``<pid>.<start time>`` of this server. Markers and cgroups carry it, so
    that a later server can tell whether their owner is still alive."""
    global _identity
    if _identity is None:
        proc = default_table().read(os.getpid())
        _identity = f"{os.getpid()}.{proc.start if proc is not None else 0}"
    return _identity


def owner_alive(identity: str, table: ProcessTable | None = None) -> bool:
    """Whether the server named by a ``server_identity`` still runs."""
    pid_text, _, start_text = identity.partition(".")
    if not (pid_text.isdigit() and start_text.isdigit()):
        return True  # not in our format: not ours to judge
    table = table or default_table()
    proc = table.read(int(pid_text))
    if proc is None:
        return False if table.enumerable else table.alive(int(pid_text))
    return not proc.zombie and proc.start == int(start_text)
