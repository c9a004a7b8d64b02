"""A raw JSON-RPC client for fuzzing the real server process.

No JSON-RPC library is involved: the fuzzer must be able to send malformed
framing and invalid UTF-8, so it writes bytes itself. A reader thread parses
the server's stdout *strictly* (LSP base framing, UTF-8 JSON bodies) and
records anything else as a protocol violation; responses are kept per id, so
a test can check that every request got exactly one. Every wait has a
timeout, and a timeout reports whether the server was burning CPU.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "agentls", "serve"]
API_KEY = "sk-fuzz-DISTINCTIVE-key-0a1b2c3d4e5f"
WAIT = 10.0  # seconds: the most one response may take
EXIT_WAIT = 15.0  # seconds: the most an orderly stop may take
START_WAIT = 30.0  # seconds: start-up and initialize, on a busy machine


def frame(body: bytes, *, extra_headers: bytes = b"") -> bytes:
    """One message in LSP base framing."""
    return b"Content-Length: %d\r\n%s\r\n" % (len(body), extra_headers) + body


def encode(message: Any) -> bytes:
    """JSON as a client would send it (non-ASCII as UTF-8; lone surrogates escaped)."""
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "backslashreplace")


def id_key(value: Any) -> str:
    """A hashable key for any JSON id (ids may be null, floats, objects...)."""
    return json.dumps(value, sort_keys=True)


def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()  # looked up before any fork: the child only calls it


def _die_with_parent() -> None:
    """In the child: get SIGKILL when the test process dies, so that a server the
    fuzzer left spinning (a hang is what it looks for) never outlives the run."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class ServerHang(AssertionError):
    """A wait ran out: the server did not answer in time."""


@dataclass
class Received:
    """Everything the server wrote, sorted out."""

    responses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    notifications: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=50))
    notification_count: int = 0
    server_requests: list[dict[str, Any]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    eof: bool = False


class RawServer:
    """``agentls serve`` on pipes, driven byte by byte."""

    def __init__(self, base_url: str, workspace: Path, *, env: dict[str, str] | None = None):
        self.base_url = base_url
        self.workspace = workspace
        environment = {**os.environ, "OPENAI_API_KEY": API_KEY, "PYTHONUNBUFFERED": "1"}
        environment["OPENAI_BASE_URL"] = base_url
        environment.update(env or {})
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=environment,
            cwd=workspace,
            preexec_fn=_die_with_parent,
        )
        self.got = Received()
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._ids = 0
        self.write_error: str | None = None  # why the last write failed (the server is gone)
        self._reader = threading.Thread(target=self._read_forever, name="fuzz-reader", daemon=True)
        self._reader.start()

    # --- reading -------------------------------------------------------------------------

    def _violation(self, text: str) -> None:
        with self._cond:
            self.got.violations.append(text)
            self._cond.notify_all()

    def _read_forever(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = self._read_headers(out)
                if length is None:
                    return
                body = out.read(length)
                if len(body) < length:
                    self._violation(f"stdout ended inside a body: {body[:200]!r}")
                    return
                try:
                    message = json.loads(body.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as exc:
                    self._violation(f"a body that is not UTF-8 JSON ({exc}): {body[:300]!r}")
                    continue
                self._dispatch(message)
        finally:
            with self._cond:
                self.got.eof = True
                self._cond.notify_all()

    def _read_headers(self, out: Any) -> int | None:
        length: int | None = None
        while True:
            line = out.readline()
            if not line:
                return None
            if line == b"\r\n":
                if length is None:
                    self._violation("a header block without Content-Length")
                    continue
                return length
            name, colon, value = line.partition(b":")
            if not colon or not line.endswith(b"\r\n"):
                self._violation(f"non-protocol bytes on stdout: {line[:300]!r}")
                continue
            if name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    self._violation(f"a bad Content-Length header: {line!r}")

    def _dispatch(self, message: Any) -> None:
        if isinstance(message, list) and message:
            # A batch answer (JSON-RPC allows them; LSP has none): one response each.
            for item in message:
                self._dispatch(item)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._violation(f"not a JSON-RPC 2.0 message: {str(message)[:300]}")
            return
        if "method" in message and "id" in message:
            # The server asks us something (progress tokens, configuration...): say yes.
            with self._cond:
                self.got.server_requests.append(message)
            result: Any = [] if message["method"] == "workspace/configuration" else None
            self.send_raw(frame(encode({"jsonrpc": "2.0", "id": message["id"], "result": result})))
            return
        with self._cond:
            if "method" in message:
                self.got.notification_count += 1
                self.got.notifications.append(message)
            elif "id" in message:
                if ("result" in message) == ("error" in message):
                    self.got.violations.append(f"a response with result and error: {message}")
                self.got.responses.setdefault(id_key(message["id"]), []).append(message)
            else:
                self.got.violations.append(f"neither a request nor a response: {message}")
            self._cond.notify_all()

    # --- writing -------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        with self._write_lock:
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                self.write_error = f"{type(exc).__name__}: {exc}"

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def send(self, message: Any) -> None:
        self.send_raw(frame(encode(message)))

    def request(self, method: Any, params: Any = None, msg_id: Any = None) -> Any:
        """Send a request (params left out when None); returns its id."""
        if msg_id is None:
            msg_id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id

    def notify(self, method: Any, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def close_input(self) -> None:
        with self._write_lock, contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    # --- waiting -------------------------------------------------------------------------

    def responses(self, msg_id: Any) -> list[dict[str, Any]]:
        with self._cond:
            return list(self.got.responses.get(id_key(msg_id), []))

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` (checked whenever the server writes); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.5))
        return True

    def wait_until(self, predicate: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
        if not self.wait_for(predicate, timeout):
            raise ServerHang(f"no {what} within {timeout:.0f} s; {self.diagnosis()}")

    def wait_response(self, msg_id: Any, timeout: float = WAIT) -> dict[str, Any]:
        """The (first) response to ``msg_id``; ServerHang if none comes in time."""
        key = id_key(msg_id)
        self.wait_until(
            lambda: bool(self.got.responses.get(key)) or self.got.eof,
            f"response to id {key}",
            timeout,
        )
        found = self.responses(msg_id)
        if not found:
            raise ServerHang(f"stdout closed before a response to id {key}; {self.diagnosis()}")
        return found[0]

    def call(self, method: str, params: Any = None, timeout: float = WAIT) -> dict[str, Any]:
        return self.wait_response(self.request(method, params), timeout)

    def wait_exit(self, timeout: float = EXIT_WAIT) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise ServerHang(
                f"the server did not exit within {timeout:.0f} s; {self.diagnosis()}"
            ) from None

    # --- health --------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far (0 if gone)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def rss_kib(self) -> int:
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
        return 0

    def diagnosis(self) -> str:
        """Why a wait may have failed: alive? busy? what did stderr say?"""
        if not self.alive:
            return f"the server exited with {self.proc.returncode}; stderr: {self.stderr_tail()}"
        before = self.cpu_seconds()
        time.sleep(0.5)
        busy = (self.cpu_seconds() - before) / 0.5
        state = f"busy (CPU {busy:.0%})" if busy > 0.5 else "idle"
        return f"the server is alive but {state}; stderr: {self.stderr_tail()}"

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def stderr_tail(self, chars: int = 1500) -> str:
        text = self.stderr_text()
        return text[-chars:] if text else "(empty)"

    def stop(self, *, kill: bool = False) -> int | None:
        """End the process whatever state it is in (at once with ``kill``); its exit code."""
        if self.alive and not kill:
            self.close_input()
            try:
                self.proc.wait(EXIT_WAIT)
            except subprocess.TimeoutExpired:
                kill = True
        if self.alive:
            self.proc.kill()
            self.proc.wait(5)
        self._reader.join(5)
        with contextlib.suppress(OSError):
            assert self.proc.stdout is not None
            self.proc.stdout.close()
        self._stderr.close()
        return self.proc.returncode


def initialize_params(server: RawServer, **options: Any) -> dict[str, Any]:
    init_options: dict[str, Any] = {"workspace": str(server.workspace), "baseUrl": server.base_url}
    init_options.update(options)
    return {
        "processId": None,
        "rootUri": server.workspace.as_uri(),
        "capabilities": {},
        "initializationOptions": init_options,
    }


def initialize(server: RawServer) -> dict[str, Any]:
    response = server.call("initialize", initialize_params(server), timeout=START_WAIT)
    assert "result" in response, f"initialize failed: {response}"
    server.notify("initialized", {})
    result: dict[str, Any] = response["result"]
    return result


PROBE = ("agent/setEffort", {"effort": "low"}, {"pane": "main", "effort": "low"})


def probe(server: RawServer, timeout: float = WAIT) -> None:
    """The server is alive and still answers a known-good request exactly right."""
    assert server.alive, f"the server died: {server.diagnosis()}"
    method, params, expected = PROBE
    msg_id = f"probe-{server.next_id()}"
    response = server.wait_response(server.request(method, params, msg_id), timeout)
    assert response == {"jsonrpc": "2.0", "id": msg_id, "result": expected}, response


Check = Callable[[dict[str, Any]], None]


@dataclass
class Sent:
    """A request of one case, and what its response must look like."""

    message: Any
    keys: tuple[str, ...]  # the ids its response may carry (its own; null if invalid)
    check: Check | None
    cancel_requested: bool = False


class Case:
    """One generated example against a running server.

    Send requests, notifications and raw bytes; ``finish()`` then waits for every
    response, makes sure the server still answers the probe, and checks that each
    request got exactly one response, that nothing else was answered, and that
    the server wrote nothing but protocol messages.
    """

    def __init__(self, server: RawServer) -> None:
        self.server = server
        self.sent: list[Sent] = []
        with server._cond:
            self._baseline = {k: len(v) for k, v in server.got.responses.items()}
            self._violations = len(server.got.violations)
        self.prompt_chars = 0
        # ids that may get a response, or none: garbage that carries an id (how many)
        self.optional: dict[str, int] = {}

    def allow(self, msg_id: Any) -> None:
        """One more message the server may answer (once) or not."""
        key = id_key(msg_id)
        self.optional[key] = self.optional.get(key, 0) + 1

    def new_responses(self, key: str) -> list[dict[str, Any]]:
        with self.server._cond:
            return self.server.got.responses.get(key, [])[self._baseline.get(key, 0) :]

    def request(
        self,
        message: dict[str, Any],
        check: Check | None = None,
        *,
        also_null: bool = False,
        raw: bytes | None = None,
    ) -> Sent:
        """Send ``message`` (or ``raw``, the bytes of it); ``also_null``: its
        response may carry id null instead of its own (an invalid id)."""
        keys = (id_key(message["id"]),) + (("null",) if also_null else ())
        sent = Sent(message, keys, check)
        self.sent.append(sent)
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("prompt"), str):
            self.prompt_chars += len(params["prompt"])
        self.server.send_raw(raw if raw is not None else frame(encode(message)))
        return sent

    def notify(self, message: dict[str, Any]) -> None:
        assert "id" not in message
        self.server.send(message)

    def send_raw(self, data: bytes) -> None:
        self.server.send_raw(data)

    def cancel(self, sent: Sent) -> None:
        sent.cancel_requested = True
        self.notify(
            {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": sent.message["id"]}}
        )

    def response(self, sent: Sent) -> dict[str, Any]:
        for key in sent.keys:
            found = self.new_responses(key)
            if found:
                return found[0]
        raise AssertionError(f"no response to {str(sent.message)[:300]}")

    def _answered(self, sent: Sent) -> bool:
        # A violation ends the wait too: assert_clean() then says what it was.
        return any(self.new_responses(k) for k in sent.keys) or self._new_violations()

    def _new_violations(self) -> bool:
        return len(self.server.got.violations) > self._violations

    def _settled(self, sent: Sent) -> bool:
        return self._answered(sent) or self.server.got.eof

    def finish(self, timeout: float = WAIT, *, settle: float | None = None) -> None:
        """Wait for every response, then check. With ``settle``, probe first and
        then give the requests only ``settle`` seconds more: for requests the
        server answers in order (a missing answer is then known at once)."""
        server = self.server
        if settle is not None:
            probe(server, timeout)
            server.wait_for(
                lambda: all(self._answered(sent) for sent in self.sent) or server.got.eof, settle
            )
        else:
            for sent in self.sent:
                server.wait_until(
                    functools.partial(self._settled, sent),
                    f"response to {str(sent.message)[:200]}",
                    timeout,
                )
            if not self._new_violations():
                probe(server, timeout)
        time.sleep(0.005)  # a duplicate is written right behind the first answer (and any
        # later one shows up as unexpected in the next case's check)
        self.assert_clean()
        for sent in self.sent:
            if sent.check is not None:
                response = self.response(sent)
                try:
                    sent.check(response)
                except AssertionError as exc:
                    raise AssertionError(
                        f"{exc}\n  request: {str(sent.message)[:500]}\n  response: "
                        f"{str(response)[:500]}"
                    ) from None

    def assert_clean(self) -> None:
        """Exactly one response per request, none to anything else, no stray bytes."""
        server = self.server
        with server._cond:
            violations = server.got.violations[self._violations :]
            new = {
                key: responses[self._baseline.get(key, 0) :]
                for key, responses in server.got.responses.items()
                if len(responses) > self._baseline.get(key, 0)
            }
        assert not violations, f"the server wrote non-protocol output: {violations}"
        expected: dict[str, int] = {}
        for sent in self.sent:
            counts = [len(new.get(k, [])) for k in sent.keys]
            assert sum(counts) == 1, (
                f"{sum(counts)} responses to {str(sent.message)[:300]}: "
                f"{[new.get(k) for k in sent.keys]}"
            )
            for key in sent.keys:
                expected[key] = expected.get(key, 0) + len(new.get(key, []))
        for key, responses in new.items():
            if key.startswith('"probe-'):
                continue
            if key in self.optional:
                most = self.optional[key] + expected.get(key, 0)
                assert len(responses) <= most, f"{len(responses)} responses with id {key}"
                continue
            assert len(responses) == expected.get(key, 0), (
                f"unexpected response(s) with id {key}: {responses}"
            )
            for response in responses:
                assert response.get("jsonrpc") == "2.0", response


CASES: dict[str, int] = {}
DURATIONS: dict[str, float] = {}
CASE_SECONDS: dict[str, float] = {}  # time spent talking to servers (the rest is generating)
SERVER_RSS_KIB: list[int] = []  # the shared server's memory, every 100 cases


def count_case(name: str) -> None:
    CASES[name] = CASES.get(name, 0) + 1


class Live:
    """The shared, initialized server that most examples run against.

    Restarted only when an example left it unusable (a failure, or a case that
    legitimately ends it); reset to a fresh main pane now and then so the
    conversation does not grow without bound.
    """

    RESET_PROMPT_CHARS = 2_000_000

    def __init__(self, fake: Any, workspace: Path) -> None:
        self.fake = fake
        self.workspace = workspace
        self._server: RawServer | None = None
        self.starts = 0
        self._prompt_chars = 0
        self.forks: set[str] = set()
        self.cases = 0

    def get(self) -> RawServer:
        if self._server is not None and not self._server.alive:
            # It passed its last check and died afterwards: that is a failure too.
            died = f"exit code {self._server.proc.returncode}; {self._server.stderr_tail()}"
            self.discard()
            raise AssertionError(f"the shared server died between examples: {died}")
        if self._server is None:
            self._server = RawServer(self.fake.base_url, self.workspace)
            self.starts += 1
            initialize(self._server)
            self._prompt_chars = 0
            self.forks.clear()
        return self._server

    def discard(self, *, kill: bool = True) -> None:
        if self._server is not None:
            self._server.stop(kill=kill)
            self._server = None

    @contextlib.contextmanager
    def case(
        self,
        name: str,
        *,
        finish: bool = True,
        settle: float | None = None,
        timeout: float = WAIT,
    ) -> Iterator[Case]:
        count_case(name)
        start = time.monotonic()
        server = self.get()
        case = Case(server)
        ok = False
        try:
            yield case
            if finish:
                case.finish(timeout, settle=settle)
            ok = True
        finally:
            CASE_SECONDS[name] = CASE_SECONDS.get(name, 0.0) + time.monotonic() - start
            if ok:
                self._after(case)
            elif not self._still_usable(case, in_order=settle is not None):
                self.discard()  # the next example starts afresh

    def _still_usable(self, case: Case, *, in_order: bool) -> bool:
        """After a failed example: may the next one use this server? Only if it is
        alive, answers the probe at once, and nothing of this example can still
        arrive later (every request answered, or all of them answered in order)."""
        server = case.server
        if not server.alive:
            return False
        if not in_order and not all(case._answered(sent) for sent in case.sent):
            return False
        try:
            probe(server, timeout=2.0)
        except AssertionError:
            return False
        return True

    def _after(self, case: Case) -> None:
        for sent in case.sent:
            if sent.message.get("method") == "agent/fork":
                result = case.response(sent).get("result")
                if isinstance(result, dict):
                    self.forks.add(result["pane"])
        self._prompt_chars += case.prompt_chars
        if self._prompt_chars > self.RESET_PROMPT_CHARS:
            self.reset()
        # The fake keeps every request it served; nobody here reads them.
        self.fake.loop.call_soon_threadsafe(self.fake.model.requests.clear)
        self.cases += 1
        if self.cases % 100 == 0:
            rss = self._server.rss_kib() if self._server is not None else 0
            SERVER_RSS_KIB.append(rss)

    def reset(self) -> None:
        """Close forks, cancel everything, start main afresh, forget recorded model traffic."""
        server = self.get()
        for pane in sorted(self.forks):
            server.call("agent/closePane", {"pane": pane})
        self.forks.clear()
        server.call("agent/cancel", {"pane": "main"})
        for _ in range(50):
            if "result" in server.call("agent/newSession", {"pane": "main"}):
                break
            server.call("agent/cancel", {"pane": "main"})
            time.sleep(0.05)
        self.fake.loop.call_soon_threadsafe(self.fake.model.requests.clear)
        self._prompt_chars = 0


class Uninitialized:
    """A server that has not been initialized, kept until something initializes
    or breaks it (``discard()``), then started afresh."""

    def __init__(self, fake: Any, workspace: Path) -> None:
        self.fake = fake
        self.workspace = workspace
        self.server: RawServer | None = None

    def get(self) -> RawServer:
        if self.server is None or not self.server.alive:
            self.server = RawServer(self.fake.base_url, self.workspace)
        return self.server

    def discard(self) -> None:
        if self.server is not None:
            self.server.stop(kill=True)
            self.server = None


@contextlib.contextmanager
def running_server(
    base_url: str, workspace: Path, *, initialized: bool = True
) -> Iterator[RawServer]:
    server = RawServer(base_url, workspace)
    try:
        if initialized:
            initialize(server)
        yield server
    finally:
        server.stop(kill=True)
