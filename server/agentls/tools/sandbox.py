"""The shell sandbox (Linux, bubblewrap): what a pane's commands may touch.

One sandbox per pane, started on its first command and kept for the pane's
life: every command of the pane — the ones the model waits for and its
background processes — runs inside it, so a dev server started in one call
is reachable on the sandbox's own loopback from the next (and from nothing
outside it). Inside:

* the whole file system read-only, except the workspace (``workspace-write``;
  read-only too in ``read-only``) and a private ``/tmp`` of the pane (a fresh
  folder under the system temp folder, removed with the sandbox);
* its own pid namespace and ``/proc``: no other process of the machine is
  visible — the server's environment (and its API key) included;
* its own network namespace with nothing but a loopback of its own, unless the
  user allowed the network; filesystem sockets of the system's services
  (``/run``, ``$XDG_RUNTIME_DIR``, gpg-agent, docker, ``$SSH_AUTH_SOCK``) are
  masked as well, since a socket on a read-only file system still connects;
* a fresh ``/dev``, IPC and UTS namespaces; ``--die-with-parent``, so nothing
  of it outlives the server, whatever kills it.

Inside runs a small fork server (``sandbox_host.py``); each command is a new
session of it. The kernel tells us each command's real pid (``SCM_CREDENTIALS``),
so receipts, ``agent/processes`` and the process sweep count and kill the real
processes; the command waits until it has been moved into its cgroup.

Where bubblewrap cannot run (not installed, user namespaces disabled, not
Linux) ``availability`` says why, the server says so once, and commands run
unsandboxed under the approval policy.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import logging
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.abc
import anyio.lowlevel

from agentls.config import SandboxPolicy
from agentls.tools.cgroups import CommandCgroup
from agentls.tools.processes import ProcessScope
from agentls.tools.proctable import owner_alive, server_identity

log = logging.getLogger(__name__)
T = TypeVar("T")

# The bubblewrap to use (tests point it elsewhere to simulate a system without one).
BWRAP_VARIABLE = "AGENTLS_BWRAP"
_PROBE_TIMEOUT = 10.0
_START_TIMEOUT = 15.0
_TEMP_PREFIX = "agentls-sandbox-"
_CREDS_SPACE = socket.CMSG_SPACE(struct.calcsize("3i"))


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether the sandbox can run here; ``reason`` says why not."""

    ok: bool
    reason: str | None = None
    bwrap: str | None = None


class SandboxError(RuntimeError):
    """The sandbox could not start, or died."""


def bwrap_binary() -> str | None:
    configured = os.environ.get(BWRAP_VARIABLE)
    if configured is not None:
        return configured if os.path.isfile(configured) else None
    return shutil.which("bwrap")


_probes: dict[str | None, Availability] = {}
_probe_lock: anyio.Lock | None = None


async def availability() -> Availability:
    """Whether bubblewrap runs here (probed once per server, a few ms)."""
    global _probe_lock
    binary = bwrap_binary()
    if binary in _probes:
        return _probes[binary]
    if _probe_lock is None:
        _probe_lock = anyio.Lock()
    async with _probe_lock:
        if binary not in _probes:
            _probes[binary] = await _probe(binary)
            result = _probes[binary]
            if not result.ok:
                log.warning("the shell sandbox is not available: %s", result.reason)
    return _probes[binary]


async def _probe(binary: str | None) -> Availability:
    if not sys.platform.startswith("linux"):
        return Availability(False, f"the sandbox needs Linux (bubblewrap); this is {sys.platform}")
    if binary is None:
        where = os.environ.get(BWRAP_VARIABLE)
        return Availability(
            False,
            f"{where} does not exist"
            if where
            else "bubblewrap (bwrap) is not installed; install the 'bubblewrap' package",
        )
    argv = [binary, *_base_arguments(), "--unshare-net", "--", "true"]
    try:
        with anyio.fail_after(_PROBE_TIMEOUT):
            result = await anyio.run_process(argv, check=False, stdin=subprocess.DEVNULL)
    except (OSError, TimeoutError) as exc:
        return Availability(False, f"{binary} could not run: {exc}")
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        why = message[-1] if message else f"exit code {result.returncode}"
        return Availability(False, f"{binary} cannot create a sandbox here: {why}")
    return Availability(True, None, binary)


def _base_arguments() -> list[str]:
    return [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--new-session",
        "--die-with-parent",
    ]


def _sockets(directory: Path, depth: int) -> list[str]:
    """Unix sockets under ``directory`` (at most ``depth`` levels down)."""
    found: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return found
    for entry in entries:
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISSOCK(mode):
            found.append(entry.path)
        elif stat.S_ISDIR(mode) and depth > 1:
            found.extend(_sockets(Path(entry.path), depth - 1))
    return found


def _masks(env: dict[str, str]) -> list[str]:
    """Arguments hiding the filesystem sockets of the system's services."""
    args: list[str] = []
    hidden: set[str] = set()
    for runtime in ("/run/user", env.get("XDG_RUNTIME_DIR", "")):
        real = os.path.realpath(runtime) if runtime else ""
        if real and os.path.isdir(real) and real not in hidden:
            args += ["--tmpfs", real]
            hidden.add(real)
    candidates = _sockets(Path("/run"), 3)
    home = Path(env.get("HOME") or Path.home())
    for folder in (home / ".gnupg", home / ".docker" / "run", home / ".ssh"):
        candidates += _sockets(folder, 1)
    agent = env.get("SSH_AUTH_SOCK")
    if agent:
        candidates.append(agent)
    for path in candidates:
        real = os.path.realpath(path)
        if real in hidden or any(real.startswith(h + "/") for h in hidden):
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.stat(real).st_mode):
                args += ["--ro-bind", "/dev/null", real]
                hidden.add(real)
    return args


def bwrap_arguments(
    binary: str, policy: SandboxPolicy, workspace: Path, temp: Path, env: dict[str, str]
) -> list[str]:
    """The bubblewrap command line of a pane's sandbox (without the command)."""
    args = [binary, *_base_arguments(), "--bind", str(temp), "/tmp"]
    if not policy.network:
        args += ["--unshare-net", *_masks(env)]
    # What lives under /tmp and must stay visible (read-only): the host's
    # interpreter, the user's home folder.
    for keep in (sys.base_prefix, env.get("HOME", "")):
        real = os.path.realpath(keep) if keep else ""
        if real.startswith("/tmp/") and os.path.isdir(real):
            args += ["--ro-bind", real, real]
    root = str(workspace)
    args += ["--bind" if policy.mode == "workspace-write" else "--ro-bind", root, root]
    args += ["--chdir", root]
    return args


def sandbox_environment(env: dict[str, str]) -> dict[str, str]:
    """What commands inside see changed: temp files and caches go to the
    private ``/tmp`` (the home folder is read-only there)."""
    return {
        **env,
        "TMPDIR": "/tmp",
        "XDG_CACHE_HOME": "/tmp/.cache",
        "AGENTLS_SANDBOX": "1",
    }


@functools.cache
def _host_command() -> tuple[str, ...]:
    """The fork server: the real interpreter (not a venv's, whose site it
    would not need), isolated, given the host's source on its command line."""
    python = os.path.realpath(sys.executable)
    source = Path(__file__).with_name("sandbox_host.py").read_text(encoding="utf-8")
    return (python, "-I", "-S", "-c", source)


async def _read_when_ready(source: int | socket.socket, read: Callable[[], T]) -> T | None:
    """``read()`` once ``source`` (non-blocking) has data; None once it is
    closed or broken."""
    while True:
        try:
            return read()
        except BlockingIOError:
            try:
                await anyio.wait_readable(source)
            except (anyio.ClosedResourceError, OSError):
                return None
        except OSError:
            return None


class _Job:
    __slots__ = ("error", "exited", "id", "pid", "returncode", "started")

    def __init__(self, job_id: int) -> None:
        self.id = job_id
        self.pid: int | None = None
        self.returncode: int | None = None
        self.error: str | None = None
        self.started = anyio.Event()
        self.exited = anyio.Event()


class HostedProcess:
    """A command running in the sandbox (a ``launch.Launched``)."""

    def __init__(self, host: SandboxHost, job: _Job, out: int, go: int) -> None:
        assert job.pid is not None
        self._host = host
        self._job = job
        self._out: int | None = out
        self._go: int | None = go
        self._pid = job.pid

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._job.returncode

    def go(self) -> None:
        """Let the command start (it waits until it is in its cgroup)."""
        if self._go is not None:
            with contextlib.suppress(OSError):
                os.write(self._go, b"g")
            os.close(self._go)
            self._go = None

    async def chunks(self) -> AsyncIterator[bytes]:
        out = self._out
        assert out is not None
        while data := await _read_when_ready(out, lambda: os.read(out, 65536)):
            yield data
            # Let everything else run between reads, like any stream does: a
            # command that floods its output must not starve the event loop.
            await anyio.lowlevel.checkpoint()

    async def wait(self) -> int:
        await self._job.exited.wait()
        assert self._job.returncode is not None
        return self._job.returncode

    def kill(self) -> None:
        if self._job.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._pid, signal.SIGKILL)

    async def aclose(self) -> None:
        if self._go is not None:  # never let run: it exits at once
            os.close(self._go)
            self._go = None
        if self._out is not None:
            anyio.notify_closing(self._out)
            os.close(self._out)
            self._out = None
        await self.wait()


class SandboxHost:
    """One pane's sandbox: bubblewrap running the fork server."""

    def __init__(self, binary: str, policy: SandboxPolicy, workspace: Path) -> None:
        self.binary = binary
        self.policy = policy
        self.workspace = workspace
        # The host pid of the sandbox's init: orphans of commands end up there.
        self.init_pid: int | None = None
        self._process: anyio.abc.Process | None = None
        self._sock: socket.socket | None = None
        self._temp: Path | None = None
        self._jobs: dict[int, _Job] = {}
        self._ids = itertools.count(1)
        self._ready = anyio.Event()
        self._dead = anyio.Event()
        self._stderr = bytearray()
        self._scope: anyio.CancelScope | None = None

    @property
    def dead(self) -> bool:
        return self._dead.is_set()

    async def start(self, task_group: anyio.abc.TaskGroup, env: dict[str, str]) -> None:
        """Start the sandbox; raises SandboxError (with bubblewrap's words) if it cannot."""
        self._temp = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{server_identity()}-"))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        ours.setblocking(False)
        info_r, info_w = os.pipe()
        os.set_blocking(info_r, False)
        self._sock = ours
        argv = [
            *bwrap_arguments(self.binary, self.policy, self.workspace, self._temp, env),
            "--info-fd",
            str(info_w),
            "--",
            *_host_command(),
            str(theirs.fileno()),
        ]
        try:
            self._process = await anyio.open_process(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(), info_w),
                env={"PATH": env.get("PATH", os.defpath), "LANG": env.get("LANG", "C.UTF-8")},
                cwd=self.workspace,
            )
        except OSError as exc:
            ours.close()
            self._remove_temp()
            raise SandboxError(f"could not start {self.binary}: {exc}") from exc
        finally:
            theirs.close()
            os.close(info_w)
        scope = anyio.CancelScope()
        self._scope = scope
        task_group.start_soon(self._serve, scope, info_r)
        try:
            with anyio.fail_after(_START_TIMEOUT):
                await self._ready.wait()
        except TimeoutError:
            await self.close()
            raise SandboxError("the sandbox did not start in time") from None
        except BaseException:
            await self.close()  # cancelled while it started: nothing of it may stay
            raise
        if self.dead:
            await self.close()
            said = self._stderr.decode("utf-8", "replace").strip()
            raise SandboxError(f"the sandbox could not start: {said or 'it exited at once'}")

    async def _serve(self, scope: anyio.CancelScope, info: int) -> None:
        with scope:
            async with anyio.create_task_group() as group:
                group.start_soon(self._read_info, info)
                group.start_soon(self._read_stderr)
                try:
                    await self._read_messages()
                finally:
                    self._host_died()
                    group.cancel_scope.cancel()

    async def _read_info(self, fd: int) -> None:
        data = bytearray()
        try:
            while chunk := await _read_when_ready(fd, lambda: os.read(fd, 4096)):
                data += chunk
                with contextlib.suppress(ValueError):
                    self.init_pid = int(json.loads(bytes(data))["child-pid"])
                    break
        finally:
            anyio.notify_closing(fd)
            os.close(fd)

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            async for chunk in self._process.stderr:
                if len(self._stderr) < 8192:
                    self._stderr += chunk[: 8192 - len(self._stderr)]

    async def _read_messages(self) -> None:
        sock = self._sock
        assert sock is not None
        while True:
            received = await _read_when_ready(sock, lambda: sock.recvmsg(1 << 16, _CREDS_SPACE))
            if received is None or not received[0]:
                return
            data, ancillary, _, _ = received
            try:
                message = json.loads(data)
            except ValueError:
                log.warning("the sandbox host sent something that is not JSON: %r", data[:200])
                continue
            op = message.get("op")
            if op == "ready":
                self._ready.set()
                continue
            job = self._jobs.get(message.get("id"))
            if job is None:
                continue
            if op == "started":
                for level, kind, payload in ancillary:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                        job.pid = struct.unpack("3i", payload[:12])[0]
                job.started.set()
            elif op == "exit":
                job.returncode = int(message.get("status", -9))
                job.started.set()
                job.exited.set()
                self._jobs.pop(job.id, None)
            elif op == "error":
                job.error = str(message.get("message"))
                job.returncode = 127
                job.started.set()
                job.exited.set()
                self._jobs.pop(job.id, None)

    def _host_died(self) -> None:
        """The host is gone (or closing): so is every process of the sandbox."""
        self._dead.set()
        self._ready.set()
        for job in self._jobs.values():
            if job.returncode is None:
                job.returncode = -signal.SIGKILL
                job.error = job.error or "the sandbox stopped"
            job.started.set()
            job.exited.set()
        self._jobs.clear()

    async def spawn(self, argv: list[str], cwd: Path, env: dict[str, str]) -> HostedProcess:
        """Start a command, held until ``go()``; raises SandboxError if the sandbox is gone."""
        if self.dead or self._sock is None:
            raise SandboxError("the sandbox has stopped")
        job = _Job(next(self._ids))
        out_r, out_w = os.pipe()
        go_r, go_w = os.pipe()
        os.set_blocking(out_r, False)
        request = json.dumps(
            {"op": "spawn", "id": job.id, "argv": argv, "cwd": str(cwd), "env": env}
        ).encode()
        self._jobs[job.id] = job
        try:
            try:
                await self._send(request, [out_w, go_r])
            finally:
                os.close(out_w)
                os.close(go_r)
            await job.started.wait()
        except BaseException:
            os.close(out_r)
            os.close(go_w)
            raise
        if job.pid is None:
            os.close(out_r)
            os.close(go_w)
            raise SandboxError(job.error or "the sandbox could not start the command")
        return HostedProcess(self, job, out_r, go_w)

    async def _send(self, data: bytes, fds: list[int]) -> None:
        sock = self._sock
        assert sock is not None
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))]
        while True:
            try:
                sock.sendmsg([data], rights)
                return
            except BlockingIOError:
                try:
                    await anyio.wait_writable(sock)
                except (anyio.ClosedResourceError, OSError) as exc:
                    raise SandboxError("the sandbox has stopped") from exc
            except OSError as exc:
                raise SandboxError(f"the sandbox has stopped: {exc}") from exc

    async def close(self) -> None:
        """Stop the sandbox: everything in it dies with it."""
        if self._sock is not None:
            anyio.notify_closing(self._sock)
            self._sock.close()
            self._sock = None
        process = self._process
        if process is not None:
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(2.0):
                    await process.wait()
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                    await process.wait()
                await process.aclose()
        if self._scope is not None:
            self._scope.cancel()
        self._host_died()
        self._remove_temp()

    def _remove_temp(self) -> None:
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None


class SandboxLauncher:
    """Commands in a pane's sandbox (a ``launch.Launcher``)."""

    def __init__(self, host: SandboxHost) -> None:
        self._host = host

    async def launch(
        self, command: str, cwd: Path, env: dict[str, str], scope: ProcessScope
    ) -> HostedProcess:
        process = await self._host.spawn(["bash", "-lc", command], cwd, sandbox_environment(env))
        cgroup = CommandCgroup.create()
        if cgroup is not None and not cgroup.add(process.pid):
            cgroup.remove()
            cgroup = None
        scope.adopt(process.pid, cgroup, reaper=self._host.init_pid, direct=False)
        process.go()
        return process


def sweep_stale_temps() -> int:
    """Remove the private temp folders of sandboxes whose server died."""
    removed = 0
    base = Path(tempfile.gettempdir())
    for folder in base.glob(f"{_TEMP_PREFIX}*"):
        identity = folder.name.removeprefix(_TEMP_PREFIX).rsplit("-", 1)[0]
        if folder.is_dir() and not owner_alive(identity):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed
