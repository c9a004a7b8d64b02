"""The command host: a tiny fork server that runs inside a pane's sandbox.

It is started by ``sandbox.py`` inside bubblewrap (``python -I -S -c <this
file> FD``): the standard library only, nothing of agentls, no site packages.
FD is a ``SOCK_SEQPACKET`` socket to the server. Messages are JSON, one per
packet.

server → host: ``{"op": "spawn", "id", "argv", "cwd", "env"}`` with two file
descriptors (``SCM_RIGHTS``): where the command's stdout and stderr go, and a
pipe it waits on before it may start.

host → server: ``{"op": "ready"}`` once; ``{"op": "started", "id"}``, sent by
the new process itself with its credentials (``SCM_CREDENTIALS``), so the
kernel gives the server its *real* pid — inside the sandbox's pid namespace
it has another one; ``{"op": "exit", "id", "status"}`` (a ``returncode``:
negative for a signal); ``{"op": "error", "id", "message"}``.

The server moves the new process into its cgroup, then writes one byte to
the go pipe (or closes it to abort: the process exits with 125). The host
exits when the server's end of the socket closes; bubblewrap's init then
takes every process of the sandbox down with it.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import struct
import sys
from typing import Any

_MAX_MESSAGE = 1 << 20
_FDS_SPACE = socket.CMSG_SPACE(2 * 4)


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        pass  # the server is gone: we exit at the next read


def _child(sock: socket.socket, job: dict[str, Any], out: int, go: int) -> None:
    """In the forked process: become a session leader, report, wait, exec."""
    code = 126
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        # The credentials carry our pid; the kernel translates it into the
        # server's pid namespace on the way.
        creds = struct.pack("3i", os.getpid(), os.getuid(), os.getgid())
        started = json.dumps({"op": "started", "id": job["id"]}).encode()
        sock.sendmsg([started], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)])
        if not os.read(go, 1):
            os._exit(125)  # the server withdrew it before it started
        os.chdir(job["cwd"])
        for signum in (signal.SIGPIPE, signal.SIGCHLD, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        os.closerange(3, max(os.sysconf("SC_OPEN_MAX"), 1024))
        argv = job["argv"]
        os.execvpe(argv[0], argv, job["env"])
    except OSError as exc:
        os.write(2, f"agentls sandbox: cannot run the command: {exc}\n".encode())
        code = 127 if isinstance(exc, FileNotFoundError) else 126
    finally:
        os._exit(code)


def _status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main(fd: int) -> int:
    sock = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    children: dict[int, int] = {}  # pid (ours) → job id
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    _send(sock, {"op": "ready"})
    while True:
        for key, _ in selector.select():
            if key.fileobj is sock:
                try:
                    data, ancillary, _, _ = sock.recvmsg(_MAX_MESSAGE, _FDS_SPACE)
                except InterruptedError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    return 0  # the server is gone: so is the sandbox
                fds: list[int] = []
                for level, kind, payload in ancillary:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        fds.extend(struct.unpack(f"{len(payload) // 4}i", payload))
                try:
                    job = json.loads(data)
                except ValueError:
                    job = {}
                if job.get("op") != "spawn" or len(fds) != 2:
                    for extra in fds:
                        os.close(extra)
                    _send(sock, {"op": "error", "id": job.get("id"), "message": "bad request"})
                    continue
                out, go = fds
                try:
                    pid = os.fork()
                except OSError as exc:
                    _send(sock, {"op": "error", "id": job["id"], "message": str(exc)})
                else:
                    if pid == 0:
                        _child(sock, job, out, go)
                    children[pid] = job["id"]
                finally:
                    os.close(out)
                    os.close(go)
            else:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
                while children:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    job_id = children.pop(pid, None)
                    if job_id is not None:
                        _send(sock, {"op": "exit", "id": job_id, "status": _status(status)})


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
