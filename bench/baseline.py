"""``--baseline REV``: the agentls of another revision, run beside this
checkout's in the same run (the same fake, the same machine load), so that a
change shows as before and after side by side.

The revision's ``server/`` folder is exported with ``git archive`` into the
run's scratch folder and its server started with that folder first on
``PYTHONPATH``: the same interpreter and dependencies, that revision's code.
"""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def export(rev: str, into: Path) -> Path:
    """``rev``'s ``server/`` under ``into``; the folder to put on ``PYTHONPATH``."""
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    target = into / f"baseline-{commit[:12]}"
    archive = into / f"baseline-{commit[:12]}.tar"
    subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(archive), commit, "server"],
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    archive.unlink()
    return target / "server"


def describe(rev: str) -> str:
    """``rev`` as the results name it: its short hash and subject."""
    done = subprocess.run(
        ["git", "-C", str(REPO), "log", "-1", "--format=%h %s", rev],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()
