"""Finding and killing every process a turn started, grandchildren included.

A command runs as the leader of its own session and process group, so one
``killpg`` reaches everything that stays in the group. A child can leave the
group (``setsid``, a double fork), so we also look for it three other ways,
each a net for a different escape:

* the environment marker: every tool process gets ``AGENTLS_PROCESS_SCOPE``
  and children inherit it, whatever session or group they move to;
* descent: any process whose parent chain leads back to one of our leaders;
* we register this server as a *child subreaper* (Linux), so an orphaned
  grandchild is re-parented to us instead of to init and stays findable by
  descent — and we reap the ones that are not our own direct spawns.

Where the system lets us make cgroups, each command also runs in a cgroup of
its own (``cgroups.py``), which nothing can leave: that is the first net, and
the others catch anything on systems without one.

What the sweep alone cannot catch (documented in docs/reliability.md): a
process that both clears its environment and escapes the tree, e.g. handed off
to a system daemon (``systemd-run``, ``at``) — it was never our child.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

import anyio

from agentls.tools.cgroups import CommandCgroup
from agentls.tools.cgroups import available as cgroups_available

MARKER_VARIABLE = "AGENTLS_PROCESS_SCOPE"
# Set in the environment of every MCP server we start (agentls.mcp): they are
# our children in sessions of their own, but never a turn's, so the sweep
# below must not take them for a turn's orphans.
MCP_MARKER_VARIABLE = "AGENTLS_MCP_SERVER"
# How long processes get to exit on SIGTERM before SIGKILL.
TERM_GRACE = 0.05
_PR_SET_CHILD_SUBREAPER = 36
# Pids this server spawned directly: their exit status belongs to the event
# loop's child watcher, so our reaper must never wait() for them.
_direct_children: set[int] = set()
_subreaper_enabled = False


def enable_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux only)."""
    global _subreaper_enabled
    if _subreaper_enabled:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper_enabled = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper_enabled = False
    return _subreaper_enabled


@dataclass(frozen=True, slots=True)
class _Proc:
    pid: int
    ppid: int
    pgid: int
    sid: int
    zombie: bool
    start: int  # clock ticks after boot


def _read_proc(pid: int) -> _Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name may contain spaces and parentheses: split after the last ')'.
    fields = data[data.rindex(b")") + 2 :].split()
    return _Proc(
        pid,
        int(fields[1]),
        int(fields[2]),
        int(fields[3]),
        fields[0] in (b"Z", b"X"),
        int(fields[19]),
    )


def _all_processes() -> dict[int, _Proc]:
    found: dict[int, _Proc] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            proc = _read_proc(int(name))
            if proc is not None:
                found[proc.pid] = proc
    return found


_MCP_MARKER = f"{MCP_MARKER_VARIABLE}=".encode()


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read()
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class KillReport:
    killed: int = 0
    surviving: int = 0

    def __add__(self, other: KillReport) -> KillReport:
        return KillReport(self.killed + other.killed, self.surviving + other.surviving)


class ProcessScope:
    """The processes of one turn: tagged at start, swept at the end."""

    def __init__(self) -> None:
        enable_subreaper()
        self.marker = f"{MARKER_VARIABLE}={uuid.uuid4().hex}"
        self._leaders: set[int] = set()
        self._cgroups: dict[int, CommandCgroup] = {}
        # When each leader started (for orphans, see ``members``).
        self._started: dict[int, int] = {}
        # What kills made while the turn was being cancelled achieved (the receipt).
        self.cancel_report = KillReport()

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        name, _, value = self.marker.partition("=")
        return {**env, name: value}

    def adopt(self, pid: int, cgroup: CommandCgroup | None = None) -> None:
        """Track a process group leader we just started (and the cgroup it runs in)."""
        self._leaders.add(pid)
        _direct_children.add(pid)
        proc = _read_proc(pid)
        if proc is not None:
            self._started[pid] = proc.start
        if cgroup is not None:
            self._cgroups[pid] = cgroup

    def forget(self, pid: int) -> None:
        self._leaders.discard(pid)
        _direct_children.discard(pid)
        self._started.pop(pid, None)
        cgroup = self._cgroups.pop(pid, None)
        if cgroup is not None:
            cgroup.remove()

    def _contained(self, roots: set[int]) -> bool:
        """True if every root runs in a cgroup (so nothing of theirs can be elsewhere).

        With no roots left, that holds only where commands get cgroups at all:
        elsewhere a finished command's escaped orphan may still be about.
        """
        if not roots:
            return cgroups_available()
        for root in roots:
            cgroup = self._cgroups.get(root)
            if cgroup is None:
                return False
            # Just spawned, the shell may not have moved itself in yet: until
            # it has, the cgroup says nothing about it.
            if alive(root) and root not in cgroup.pids():
                return False
        return True

    def members(self, leaders: Iterable[int] | None = None) -> set[int]:
        """Live processes belonging to the given leaders (default: the whole turn)."""
        roots = set(self._leaders if leaders is None else leaders)
        if self._contained(roots):
            # Every root runs in a cgroup, which nothing can leave: the cgroups
            # are the whole answer, no need to sweep /proc (~2.5 ms a time).
            return {pid for root in roots for pid in self._cgroups[root].pids() if alive(pid)}
        whole_turn = leaders is None
        table = _all_processes()
        me = os.getpid()
        marker = self.marker.encode()
        found: set[int] = set()
        # An orphan re-parented to us (we are subreaper) that has left its
        # session and cleared its environment has nothing left to say whose it
        # was but when it started: after one of these roots did. (Children the
        # embedding program starts itself stay in our session: never these.)
        since = min((self._started[r] for r in roots if r in self._started), default=None)
        my_session = os.getsid(0)
        orphans = {
            proc.pid
            for proc in table.values()
            if proc.ppid == me
            and since is not None
            and proc.start >= since
            and proc.sid != my_session
            and proc.pid not in _direct_children
            and not proc.zombie
            and not _has_marker(proc.pid, _MCP_MARKER)
        }
        found |= orphans
        roots |= orphans  # and their descendants by descent
        for root in roots:
            cgroup = self._cgroups.get(root)
            if cgroup is not None:
                found |= {pid for pid in cgroup.pids() if pid in table and not table[pid].zombie}
        for proc in table.values():
            if proc.pid == me or proc.zombie:
                continue
            if proc.pgid in roots or proc.sid in roots or proc.pid in roots:
                found.add(proc.pid)
                continue
            # Descent: walk up the parent chain (bounded, in case of a cycle mid-update).
            parent, hops = proc.ppid, 0
            while parent > 1 and parent != me and hops < 64:
                if parent in roots:
                    found.add(proc.pid)
                    break
                ancestor = table.get(parent)
                parent, hops = (ancestor.ppid if ancestor else 0), hops + 1
            else:
                if whole_turn and _has_marker(proc.pid, marker):
                    found.add(proc.pid)
        return found

    async def kill(
        self,
        leaders: Iterable[int] | None = None,
        *,
        term_grace: float = TERM_GRACE,
        grace: float = 2.0,
    ) -> KillReport:
        """Stop every member (of some leaders, or of the whole turn) and wait
        until they are gone; report how many were killed and how many survived.

        SIGTERM first, so shells run their exit traps (a login shell's pyenv,
        for one, holds a lock it only releases in a trap); after ``term_grace``
        whatever is left gets SIGKILL — and the cgroup's atomic kill, which
        also takes whatever was forked in the meantime.
        """
        targets = self.members(leaders)
        if not targets:
            return KillReport()
        _signal(targets, signal.SIGTERM)
        living = await _wait_gone(targets, term_grace)
        roots = self._leaders if leaders is None else set(leaders)
        for root in roots:
            cgroup = self._cgroups.get(root)
            if cgroup is not None:
                cgroup.kill()  # atomic, and nothing can have left it
        # A new child may have been forked while we were signalling: sweep again
        # (a cgroup's kill took those already).
        late = set() if self._contained(roots) else self.members(leaders) - targets
        targets |= late
        _signal(living | late, signal.SIGKILL)
        living = await _wait_gone(living | late, grace)
        _reap(targets)
        return KillReport(killed=len(targets) - len(living), surviving=len(living))


def _signal(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


async def _wait_gone(pids: set[int], timeout: float) -> set[int]:
    """Wait up to ``timeout`` for the processes to die; the ones still alive."""
    deadline = time.monotonic() + timeout
    living = set(pids)
    while True:
        _reap(pids)
        living = {pid for pid in living if alive(pid)}
        if not living or time.monotonic() >= deadline:
            return living
        await anyio.sleep(0.001)


def alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    proc = _read_proc(pid)
    return proc is not None and not proc.zombie


def _reap(pids: Iterable[int]) -> None:
    """Collect the exit status of killed processes that were re-parented to us
    (we are their subreaper). Our direct spawns are left to the event loop's
    child watcher, and so is every pid we did not kill ourselves."""
    me = os.getpid()
    for pid in pids:
        if pid in _direct_children:
            continue
        proc = _read_proc(pid)
        if proc is not None and proc.zombie and proc.ppid == me:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
