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
  descent — and we reap the ones that are not our own direct spawns. Inside a
  sandbox, orphans go to the sandbox's own init instead: its host pid is
  registered as a reaper too.

Where the system lets us make cgroups, each command also runs in a cgroup of
its own (``cgroups.py``), which nothing can leave: that is the first net, and
the others catch anything on systems without one.

Every pid here is a pid of the server's own pid namespace: a sandboxed
command's leader is known by its real pid (``sandbox.py`` learns it from the
kernel), never by the number it sees for itself inside the sandbox.

Without ``/proc`` (macOS) processes cannot be listed: each leader's process
group is signalled as a whole and waited for with ``killpg(pgid, 0)``; what
left its group is out of reach (docs/security.md).

What the sweep alone cannot catch (documented in docs/reliability.md): a
process that both clears its environment and escapes the tree, e.g. handed off
to a system daemon (``systemd-run``, ``at``) — it was never our child.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import anyio

from agentls.tools.cgroups import CommandCgroup
from agentls.tools.cgroups import available as cgroups_available
from agentls.tools.proctable import ProcessTable, default_table, owner_alive, server_identity

log = logging.getLogger(__name__)

MARKER_VARIABLE = "AGENTLS_PROCESS_SCOPE"
# Set in the environment of every MCP server we start (agentls.mcp): they are
# our children in sessions of their own, but never a turn's, so the sweep
# below must not take them for a turn's orphans.
MCP_MARKER_VARIABLE = "AGENTLS_MCP_SERVER"
_MCP_MARKER = f"{MCP_MARKER_VARIABLE}=".encode()
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
class KillReport:
    killed: int = 0
    surviving: int = 0

    def __add__(self, other: KillReport) -> KillReport:
        return KillReport(self.killed + other.killed, self.surviving + other.surviving)


class ProcessScope:
    """The processes of one turn (or of a pane's background processes):
    tagged at start, swept at the end."""

    def __init__(self, table: ProcessTable | None = None) -> None:
        enable_subreaper()
        self.table = table or default_table()
        self.marker = f"{MARKER_VARIABLE}={server_identity()}.{uuid.uuid4().hex}"
        self._leaders: set[int] = set()
        self._cgroups: dict[int, CommandCgroup] = {}
        # When each leader started (for orphans, see ``members``).
        self._started: dict[int, int] = {}
        # Besides this server: the init of each sandbox a leader runs in
        # (orphans of a sandboxed command are re-parented to it).
        self._reapers: dict[int, int] = {}
        # What kills made while the turn was being cancelled achieved (the receipt).
        self.cancel_report = KillReport()

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        name, _, value = self.marker.partition("=")
        return {**env, name: value}

    def adopt(
        self,
        pid: int,
        cgroup: CommandCgroup | None = None,
        *,
        reaper: int | None = None,
        direct: bool = True,
    ) -> None:
        """Track a process group leader we just started (and the cgroup it
        runs in; ``reaper``: the init of the sandbox it runs in; ``direct``:
        it is our own child, reaped by the event loop)."""
        self._leaders.add(pid)
        if direct:
            _direct_children.add(pid)
        proc = self.table.read(pid)
        if proc is not None:
            self._started[pid] = proc.start
        if cgroup is not None:
            self._cgroups[pid] = cgroup
        if reaper is not None:
            self._reapers[pid] = reaper

    def forget(self, pid: int) -> None:
        self._leaders.discard(pid)
        _direct_children.discard(pid)
        self._started.pop(pid, None)
        self._reapers.pop(pid, None)
        cgroup = self._cgroups.pop(pid, None)
        if cgroup is not None:
            cgroup.remove()

    @property
    def leaders(self) -> frozenset[int]:
        return frozenset(self._leaders)

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
            if self.table.alive(root) and root not in cgroup.pids():
                return False
        return True

    def members(self, leaders: Iterable[int] | None = None) -> set[int]:
        """Live processes belonging to the given leaders (default: the whole turn)."""
        roots = set(self._leaders if leaders is None else leaders)
        if self._contained(roots):
            # Every root runs in a cgroup, which nothing can leave: the cgroups
            # are the whole answer, no need to sweep /proc (~2.5 ms a time).
            alive = self.table.alive
            return {pid for root in roots for pid in self._cgroups[root].pids() if alive(pid)}
        if not self.table.enumerable:
            # No /proc: the leaders of groups that still have a process.
            return {root for root in roots if self.table.group_alive(root)}
        whole_turn = leaders is None
        table = self.table.all()
        me = os.getpid()
        marker = self.marker.encode()
        found: set[int] = set()
        # An orphan re-parented to us (we are subreaper) or to a sandbox's init
        # that has left its session and cleared its environment has nothing
        # left to say whose it was but when it started: after one of these
        # roots did. (Children the embedding program starts itself stay in
        # our session: never these.)
        since = min((self._started[r] for r in roots if r in self._started), default=None)
        reapers = {me, *(self._reapers[r] for r in roots if r in self._reapers)}
        my_session = os.getsid(0)
        orphans = {
            proc.pid
            for proc in table.values()
            if proc.ppid in reapers
            and since is not None
            and proc.start >= since
            and proc.sid != my_session
            and proc.pid not in _direct_children
            and proc.pid not in self._reapers.values()
            and not proc.zombie
            and not self.table.has_marker(proc.pid, _MCP_MARKER)
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
                if whole_turn and self.table.has_marker(proc.pid, marker):
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
        roots = set(self._leaders if leaders is None else leaders)
        if not self.table.enumerable and not self._contained(roots):
            return await self._kill_groups(roots, term_grace, grace)
        targets = self.members(roots)
        if not targets:
            return KillReport()
        _signal(targets, signal.SIGTERM)
        living = await self._wait_gone(targets, term_grace)
        for root in roots:
            cgroup = self._cgroups.get(root)
            if cgroup is not None:
                cgroup.kill()  # atomic, and nothing can have left it
        # A new child may have been forked while we were signalling: sweep again
        # (a cgroup's kill took those already).
        late = set() if self._contained(roots) else self.members(roots) - targets
        targets |= late
        _signal(living | late, signal.SIGKILL)
        living = await self._wait_gone(living | late, grace)
        self._reap(targets)
        return KillReport(killed=len(targets) - len(living), surviving=len(living))

    async def _kill_groups(self, roots: set[int], term_grace: float, grace: float) -> KillReport:
        """Without /proc: signal each leader's process group as a whole. The
        report counts groups (one process each, at least)."""
        groups = {root for root in roots if self.table.group_alive(root)}
        if not groups:
            return KillReport()

        def group_alive(group: int) -> bool:
            _reap_group(group)
            return self.table.group_alive(group)

        _signal_groups(groups, signal.SIGTERM)
        living = await _wait(groups, group_alive, term_grace)
        _signal_groups(living, signal.SIGKILL)
        living = await _wait(living, group_alive, grace)
        return KillReport(killed=len(groups) - len(living), surviving=len(living))

    async def _wait_gone(self, pids: set[int], timeout: float) -> set[int]:
        """Wait up to ``timeout`` for the processes to die; the ones still alive."""

        def alive(pid: int) -> bool:
            self._reap((pid,))
            return self.table.alive(pid)

        return await _wait(pids, alive, timeout)

    def _reap(self, pids: Iterable[int]) -> None:
        """Collect the exit status of killed processes that were re-parented to us
        (we are their subreaper). Our direct spawns are left to the event loop's
        child watcher, and so is every pid we did not kill ourselves."""
        me = os.getpid()
        for pid in pids:
            if pid in _direct_children:
                continue
            proc = self.table.read(pid)
            if proc is not None and proc.zombie and proc.ppid == me:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)


def _reap_group(group: int) -> None:
    """Collect the zombies of a process group that were re-parented to us (a
    zombie still counts as a member for ``killpg(group, 0)``). Looked at first
    without reaping, so that our direct spawns are left to the event loop."""
    while True:
        try:
            found = os.waitid(os.P_PGID, group, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except (ChildProcessError, OSError):
            return
        if found is None or found.si_pid in _direct_children:
            return
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(found.si_pid, os.WNOHANG)


def _signal(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _signal_groups(groups: Iterable[int], signum: int) -> None:
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signum)


async def _wait(items: set[int], alive: Callable[[int], bool], timeout: float) -> set[int]:
    """Wait up to ``timeout`` until ``alive`` is false for every item; those still alive."""
    deadline = time.monotonic() + timeout
    living = set(items)
    while True:
        living = {item for item in living if alive(item)}
        if not living or time.monotonic() >= deadline:
            return living
        await anyio.sleep(0.001)


def alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    return default_table().alive(pid)


def kill_leftovers(table: ProcessTable | None = None) -> int:
    """Kill what servers that died without cleaning up (``kill -9``) left
    behind: processes carrying the marker of a server that no longer runs.
    Returns how many were killed. Runs once at start-up, off the event loop."""
    table = table or default_table()
    if not table.enumerable:
        return 0
    prefix = f"{MARKER_VARIABLE}=".encode()
    me = os.getpid()
    doomed: list[int] = []
    for proc in table.all().values():
        if proc.pid == me or proc.zombie:
            continue
        try:
            with open(f"/proc/{proc.pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue  # not ours to read: not ours to kill
        for entry in environ.split(b"\0"):
            if entry.startswith(prefix):
                identity = entry[len(prefix) :].decode("ascii", "replace").rsplit(".", 1)[0]
                if not owner_alive(identity, table):
                    doomed.append(proc.pid)
                break
    _signal(doomed, signal.SIGKILL)
    if doomed:
        log.info("killed %d process(es) left behind by a server that died", len(doomed))
    return len(doomed)
