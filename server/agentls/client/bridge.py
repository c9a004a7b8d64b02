"""``agentls serve --reattach``: an editor's stdio, bridged to the workspace's
long-lived server (``serve --listen``), which it starts if none runs.

An editor that starts the server this way keeps it over a reload: when the
editor's end closes (its process went away), only this bridge ends; the server
goes on, and the next bridge — the reloaded editor's — attaches to it (see
``server/attach.py``). ``shutdown`` and ``exit`` pass through and stop it as
usual. Plain standard library, so that it starts fast.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from agentls.sessions.paths import runtime_folder, socket_path

START_TIMEOUT = 30.0  # seconds for a new server to start listening


def run_bridge(workspace: Path, linger: float, log_level: str) -> int:
    path = socket_path(workspace)
    try:
        # Before connecting: a socket in a folder someone else controls could
        # be anyone's server.
        _private(runtime_folder())
    except OSError as exc:
        print(f"agentls: {exc}", file=sys.stderr, flush=True)
        return 1
    connection = _connect(path)
    if connection is None:
        connection, problem = _start_server(path, workspace, linger, log_level)
        if connection is None:
            print(f"agentls: the server did not start: {problem}", file=sys.stderr, flush=True)
            return 1
    return _pump(connection)


def _connect(path: Path) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except OSError:
        connection.close()
        return None
    return connection


def _private(folder: Path) -> None:
    """The folder of the sockets: ours alone (refuse one someone else made)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(f"{folder} must be a folder of this user's, closed to others")


def _start_server(
    path: Path, workspace: Path, linger: float, log_level: str
) -> tuple[socket.socket | None, str]:
    log_file = path.with_suffix(".log")
    with open(log_file, "ab") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentls",
                "serve",
                "--listen",
                str(path),
                "--linger",
                str(linger),
                "--log-level",
                log_level,
            ],
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            # Its own session: it outlives this bridge and the editor's process group.
            start_new_session=True,
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        connection = _connect(path)
        if connection is not None:
            return connection, ""
        code = server.poll()
        if code is not None:
            # Exit 0: another bridge's server won the race; it is listening by now.
            connection = _connect(path)
            if connection is not None:
                return connection, ""
            return None, f"it exited with code {code}: {_last_line(log_file)}"
        time.sleep(0.02)
    server.kill()
    return None, f"it did not listen on {path} within {START_TIMEOUT:.0f} s"


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return lines[-1] if lines else "(no output)"


def _pump(connection: socket.socket) -> int:
    """Bytes both ways until the server closes (or the editor does)."""

    def upstream() -> None:
        try:
            while data := os.read(0, 1 << 16):
                connection.sendall(data)
        except OSError:
            pass
        # The editor's end closed: the server sees the connection end, and waits.
        try:
            connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    threading.Thread(target=upstream, name="editor→server", daemon=True).start()
    try:
        while data := connection.recv(1 << 16):
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        pass
    connection.close()
    return 0
