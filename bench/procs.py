"""What /proc says about processes: CPU time, memory, liveness, marked commands."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable

from agentls.tools.processes import alive

__all__ = ["alive", "command", "cpu_seconds", "kill_all", "marked", "rss_bytes"]

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads (dead ones included)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    # After the command: state is field 3, utime field 14, stime field 15 (1-based).
    return (int(fields[11]) + int(fields[12])) / _TICKS


def rss_bytes(pid: int) -> int:
    """Resident set size of a process."""
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def marked(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker``."""
    needle = marker.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if needle in cmdline and alive(int(name)):
            found.append(int(name))
    return found


def command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def kill_all(pids: Iterable[int]) -> int:
    """SIGKILL each process that is still alive; how many were."""
    count = 0
    for pid in pids:
        if alive(pid):
            count += 1
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return count
