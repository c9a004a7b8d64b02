"""The measurements. One ``Run`` drives every contestant against one fake
model on one event loop, collects raw samples, then turns them into figures
with their targets (``assemble``)."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.testing.fake_model import Reply
from bench import codex as codex_peer
from bench import edit_figures as edit_bench
from bench import mcp_figures as mcp_bench
from bench import ours, procs
from bench.agentls_server import BARE_PYGLS, AgentlsServer
from bench.clients import RpcError
from bench.core_worker import steps as core_steps
from bench.fakehub import FakeHub, tag
from bench.results import BARE, BEFORE, CODEX, OURS, SDK_LINES, SDK_TYPED, Results

BENCH_DIR = Path(__file__).resolve().parent

# Repetition numbers: each contestant has its own range, so tags never collide.
BASE = {
    OURS: 0,
    CODEX: 100_000,
    SDK_TYPED: 200_000,
    SDK_LINES: 300_000,
    "load": 400_000,
    BEFORE: 700_000,
}
LONG = {OURS: 500_000, CODEX: 600_000}  # turns on a long conversation

FIRST_DELTA_TEXT = "Hello from the fake model: the first words of an answer, a few at a time."


@dataclass(frozen=True)
class Sizes:
    smoke: bool
    startup_reps: int
    first_delta_reps: int
    throughput_deltas: int
    throughput_reps: int
    typed_reps: int
    cancel_reps: int
    codex_cancel_reps: int
    load_aux: int
    load_reps: int
    fork_sizes: tuple[int, ...]
    fork_reps: int
    fork_wire_sizes: tuple[int, ...]
    fork_codex_sizes: tuple[int, ...]
    fork_wire_reps: int
    memory_items: int
    import_reps: int
    sandbox_reps: int
    # The session store (bench/sessions.py).
    sessions_reps: int
    resume_items: int
    resume_reps: int
    list_sessions: int
    list_reps: int
    step_reps: int
    # Edits through the editor (bench/edit_figures.py).
    edit_reps: int
    edit_lines: int
    edit_hunks: int
    open_documents: int
    open_document_lines: int

    @classmethod
    def full(cls) -> Sizes:
        return cls(
            smoke=False,
            startup_reps=8,
            first_delta_reps=30,
            throughput_deltas=20_000,
            throughput_reps=5,
            typed_reps=3,
            cancel_reps=30,
            codex_cancel_reps=10,
            load_aux=16,
            load_reps=60,
            fork_sizes=(1_000, 10_000, 100_000),
            fork_reps=50,
            fork_wire_sizes=(1_000, 10_000),
            fork_codex_sizes=(1_000, 10_000, 100_000),
            fork_wire_reps=10,
            memory_items=10_000,
            import_reps=2,
            sandbox_reps=60,
            sessions_reps=12,
            resume_items=10_000,
            resume_reps=10,
            list_sessions=200,
            list_reps=20,
            step_reps=200,
            edit_reps=30,
            edit_lines=5_000,
            edit_hunks=10,
            open_documents=200,
            open_document_lines=1_000,
        )

    @classmethod
    def smoke_sizes(cls) -> Sizes:
        return cls(
            smoke=True,
            startup_reps=1,
            first_delta_reps=3,
            throughput_deltas=300,
            throughput_reps=1,
            typed_reps=1,
            cancel_reps=2,
            codex_cancel_reps=1,
            load_aux=2,
            load_reps=3,
            fork_sizes=(100, 1_000),
            fork_reps=3,
            fork_wire_sizes=(100,),
            fork_codex_sizes=(100,),
            fork_wire_reps=2,
            memory_items=1_000,
            import_reps=0,
            sandbox_reps=3,
            sessions_reps=1,
            resume_items=100,
            resume_reps=2,
            list_sessions=5,
            list_reps=2,
            step_reps=5,
            edit_reps=2,
            edit_lines=200,
            edit_hunks=3,
            open_documents=5,
            open_document_lines=50,
        )


def throughput_chunks(n: int) -> list[str]:
    """``n`` distinct tiny deltas (hex counter and a space): loss or reordering shows."""
    return [f"{i:x} " for i in range(n)]


async def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.002)


async def _wait_sleepers(marker: str, timeout: float = 15.0) -> list[int]:
    """The processes of a cancel repetition, once both ``sleep`` commands run."""
    deadline = time.monotonic() + timeout
    while True:
        pids = procs.marked(marker)
        sleepers = [p for p in pids if procs.command(p).startswith("sleep ")]
        if len(sleepers) >= 2:
            return pids
        if time.monotonic() > deadline:
            raise TimeoutError(f"the command's processes did not start ({len(pids)} found)")
        await asyncio.sleep(0.003)


async def _survivors_after(pids: list[int], seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(procs.alive(p) for p in pids):
            return 0
        await asyncio.sleep(0.01)
    return sum(1 for p in pids if procs.alive(p))


class Run:
    def __init__(
        self,
        sizes: Sizes,
        scratch: Path,
        *,
        use_codex: bool,
        install_codex: bool,
        only: set[str] | None = None,
        baseline: Path | None = None,
        log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    ) -> None:
        self.sizes = sizes
        self.scratch = scratch
        # ``--baseline REV``: that revision's server/ folder (run beside ours).
        self.baseline = baseline
        self.only = only
        self.log = log
        self.use_codex = use_codex
        self.install_codex = install_codex
        self.codex_path: Path | None = None
        self.codex_reason = "not requested (--no-codex)"
        self.raw: dict[str, Any] = {}
        self.nonce = f"{os.getpid() % 1000:03d}"
        self.cancel_commands: dict[int, str] = {}
        self.hub = FakeHub()
        self.codex_requests: list[str] = []
        self.codex_request_count = 0
        self.codex_failures: list[str] = []
        self.on_server: Callable[[str, int], Any] | None = None  # profiling hook
        self.timings: dict[str, float] = {}
        self.home = scratch / "home"
        self.settle = 0.2 if sizes.smoke else 1.0  # idle time before sampling RSS

    def wants(self, key: str) -> bool:
        return self.only is None or key in self.only

    def stderr_file(self, name: str) -> Any:
        logs = self.scratch / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        return open(logs / f"{name}.log", "ab")

    def workspace(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="ws-", dir=self.scratch))

    # --- replies ---------------------------------------------------------------------------------

    def _routes(self) -> None:
        hub = self.hub
        hub.on("warm", lambda n: Reply.text("ok"))
        hub.on("ft", lambda n: Reply.text("ok"))
        hub.on("fd", lambda n: Reply.text(FIRST_DELTA_TEXT, delay=0.002, delay_first=0.02))
        chunks = throughput_chunks(self.sizes.throughput_deltas)
        self.throughput_text = "".join(chunks)
        hub.on("tp", lambda n: Reply.text(self.throughput_text, chunks=chunks))
        hub.on(
            "cx",
            lambda n: Reply.tool_call(
                "exec_command", {"cmd": self.cancel_commands[n]}, call_id=f"call_cx_{n}"
            ),
        )
        hub.on(
            "big",
            lambda n: Reply.items(*(Reply.text(f"item {k}", chunks=1) for k in range(n))),
        )
        # The summary a compaction asks for (its focus carries the tag).
        hub.on("cmp", lambda n: Reply.text("Summary: the model listed many items, one per line."))
        aux_text = " ".join(f"w{k}" for k in range(400 if not self.sizes.smoke else 40))
        hub.on("aux", lambda n: Reply.text(aux_text, delay=0.002))

    # --- the run ---------------------------------------------------------------------------------

    async def run(self) -> Results:
        self._routes()
        self.loadavg = {"start": os.getloadavg()}
        started = time.monotonic()
        async with self.hub:
            if self.use_codex:
                self.codex_path, self.codex_reason = await asyncio.to_thread(
                    codex_peer.ensure, install=self.install_codex
                )
                if self.codex_path is None:
                    self.log(f"Codex: n/a ({self.codex_reason})")
            if self.wants("startup"):
                await self._timed("imports", self.imports())
                await self._timed("startup", self.startup())
            if self.wants_session():
                await self._timed("agentls session", ours.sessions(self))
                if self.codex_path is not None:
                    await self._timed("codex session", self._codex_guarded(self.codex()))
                await self._timed("sdk baselines", self.sdk())
            if self.wants("fork") or self.wants("memory"):
                await self._timed("agent core", self.core())
            if self.wants("sandbox"):
                await self._timed("sandbox", self.sandbox())
            if self.wants("mcp"):
                await self._timed("mcp overhead", mcp_bench.overhead(self))
                await self._timed("mcp startup", mcp_bench.startup(self))
            if self.wants("sessions"):
                from bench import sessions

                await self._timed("sessions", sessions.measure(self))
            if self.wants("edits"):
                await self._timed("edits", edit_bench.measure(self))
        self.timings["total"] = time.monotonic() - started
        self.loadavg["end"] = os.getloadavg()
        return self.assemble()

    def wants_session(self) -> bool:
        keys = ("first-delta", "submit", "throughput", "cancel", "load", "fork")
        return any(self.wants(k) for k in keys)

    async def _timed(self, name: str, work: Any) -> None:
        self.log(f"bench: {name}...")
        t0 = time.monotonic()
        await work
        self.timings[name] = time.monotonic() - t0
        self.log(f"bench: {name} done in {self.timings[name]:.1f} s")

    # --- the shell sandbox ------------------------------------------------------------------------

    async def sandbox(self) -> None:
        """``exec_command true`` sandboxed and not, alternately (bench/sandbox_probe.py),
        with the throwaway HOME the servers get (no login profile)."""
        self.home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "HOME": str(self.home)}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.sandbox_probe",
            str(self.sizes.sandbox_reps),
            str(self.workspace()),
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr_file("sandbox"),
            env=env,
        )
        stdout, _ = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"bench.sandbox_probe failed ({proc.returncode}); see its log")
        self.raw["sandbox"] = json.loads(stdout)

    # --- start-up --------------------------------------------------------------------------------

    async def imports(self) -> None:
        """Import costs in a fresh interpreter (context for the start-up figure)."""
        out: dict[str, list[float]] = {}
        modules = ("lsprotocol.types", "pygls.lsp.server", "openai", "agentls.lsp.app")
        for module in modules if self.sizes.import_reps else ():
            code = (
                "import time; t = time.perf_counter(); import "
                + module
                + "; print((time.perf_counter() - t) * 1000)"
            )
            for _ in range(self.sizes.import_reps):
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
                )
                stdout, _ = await proc.communicate()
                out.setdefault(module, []).append(float(stdout.decode().strip() or "nan"))
        self.raw["imports"] = out

    async def startup(self) -> None:
        sizes = self.sizes
        startup: dict[str, list[float]] = {OURS: [], BARE: [], CODEX: []}
        first_turn: dict[str, list[float]] = {"now": [], "after 1 s": [], CODEX: []}
        rss: dict[str, float] = {}
        counter = itertools.count(BASE[OURS])
        for rep in range(sizes.startup_reps):
            last = rep == sizes.startup_reps - 1
            # agentls, then its first turn: at once, or as a user would, a second later.
            ws = self.workspace()
            session = await AgentlsServer.start(
                self.hub.base_url, ws, self.stderr_file("agentls-startup"), home=self.home
            )
            startup[OURS].append((session.t_initialized_ns - session.client.t_spawn_ns) / 1e6)
            delay = "after 1 s" if rep % 2 else "now"
            if delay != "now":
                await asyncio.sleep(1.0)
            n = next(counter)
            turn = await session.run_turn(f"{tag('ft', n)} first prompt")
            request = await self.hub.request("ft", n)
            first_turn[delay].append((request.t_arrival_ns - turn.t_send_ns) / 1e6)
            if last:
                await asyncio.sleep(self.settle)
                rss[OURS] = procs.rss_bytes(session.pid)
            await session.close()

            ws = self.workspace()
            bare = await AgentlsServer.start(
                self.hub.base_url,
                ws,
                self.stderr_file("bare-pygls"),
                command=BARE_PYGLS,
                home=self.home,
            )
            startup[BARE].append((bare.t_initialized_ns - bare.client.t_spawn_ns) / 1e6)
            if last:
                await asyncio.sleep(self.settle)
                rss[BARE] = procs.rss_bytes(bare.pid)
            await bare.close()

            if self.codex_path is not None and not self.codex_failures:
                await self._codex_guarded(self._codex_startup(rep, last, startup, first_turn, rss))
        self.raw["startup"] = startup
        self.raw["first_turn"] = first_turn
        self.raw["rss_idle"] = rss

    async def _codex_startup(
        self,
        rep: int,
        last: bool,
        startup: dict[str, list[float]],
        first_turn: dict[str, list[float]],
        rss: dict[str, float],
    ) -> None:
        assert self.codex_path is not None
        home = codex_peer.Home.create()
        ws = self.workspace()
        before = self.hub.request_count
        cx: codex_peer.CodexSession | None = None
        try:
            cx = await codex_peer.CodexSession.start(
                self.codex_path, self.hub.base_url, home, ws, self.stderr_file("codex")
            )
            startup[CODEX].append((cx.t_initialized_ns - cx.client.t_spawn_ns) / 1e6)
            await cx.new_thread()
            n = BASE[CODEX] + 90_000 + rep
            cturn = await cx.run_turn(f"{tag('ft', n)} first prompt")
            request = await self.hub.request("ft", n)
            first_turn[CODEX].append((request.t_arrival_ns - cturn.t_send_ns) / 1e6)
            if last:
                await asyncio.sleep(self.settle)
                rss[CODEX] = procs.rss_bytes(cx.pid)
        finally:
            if cx is not None:
                await cx.close()
            self._codex_requests(before)
            home.remove()

    def _codex_requests(self, before: int) -> None:
        new = self.hub.requests_since(before)
        self.codex_request_count += len(new)
        self.codex_requests += FakeHub.foreign(new)

    # --- agentls (bench/ours.py) ---------------------------------------------------------------

    async def profiled(self, figure: str, pid: int, work: Any) -> None:
        if self.on_server is None:
            await work
            return
        stop = await self.on_server(figure, pid)
        try:
            await work
        finally:
            await stop()

    async def long_submit(self, size: int, run_turn: Any, base: int, who: str) -> None:
        """Submit → model request on a conversation of ``size`` items."""
        samples = []
        # Seven turns: a p50 of a few samples moves with every hiccup of a shared machine.
        for i in range(3 if self.sizes.smoke else 7):
            turn = await run_turn(f"{tag('fd', base + i)} say hello", timeout=120)
            request = self.hub.seen("fd", base + i)
            assert request is not None
            samples.append((request.t_arrival_ns - turn.t_send_ns) / 1e6)
        self.raw.setdefault("long_submit", {}).setdefault(who, []).append(
            {"items": size, "ms": samples}
        )

    # --- Codex -----------------------------------------------------------------------------------

    async def _codex_guarded(self, work: Any) -> None:
        """Codex is a peer: if it fails, say how, and go on without it."""
        try:
            await work
        except Exception as exc:
            self.codex_failures.append(f"{type(exc).__name__}: {exc}")
            self.log(f"bench: Codex failed: {exc!r}; going on without it")

    async def codex(self) -> None:
        assert self.codex_path is not None
        home = codex_peer.Home.create()
        ws = self.workspace()
        before = self.hub.request_count
        try:
            session = await codex_peer.CodexSession.start(
                self.codex_path, self.hub.base_url, home, ws, self.stderr_file("codex")
            )
            try:
                await session.new_thread()
                await session.run_turn(f"{tag('warm', 0)} warm up")
                self.raw["codex_rss_after_warm_up"] = procs.rss_bytes(session.pid)
                if self.wants("first-delta") or self.wants("submit"):
                    await self.codex_first_delta(session)
                if self.wants("throughput"):
                    await session.new_thread()
                    await self.codex_throughput(session)
                if self.wants("cancel"):
                    await session.new_thread()
                    await self.codex_cancel(session)
                if self.wants("fork"):
                    await self.codex_fork_rpc(session)
                if session.client.server_requests:
                    self.raw["codex_server_requests"] = session.client.server_requests
            finally:
                await session.close()
        finally:
            self._codex_requests(before)
            home.remove()

    async def codex_first_delta(self, session: codex_peer.CodexSession) -> None:
        first: list[float] = []
        submit: list[float] = []
        for i in range(self.sizes.first_delta_reps):
            n = BASE[CODEX] + i
            turn = await session.run_turn(f"{tag('fd', n)} say hello")
            request = self.hub.seen("fd", n)
            assert request is not None and request.t_first_delta_ns is not None
            submit.append((request.t_arrival_ns - turn.t_send_ns) / 1e6)
            first.append((turn.t_first_delta_ns - request.t_first_delta_ns) / 1e6)
        self.raw.setdefault("first_delta", {})[CODEX] = first
        self.raw.setdefault("submit", {})[CODEX] = submit

    async def codex_throughput(self, session: codex_peer.CodexSession) -> None:
        rows = []
        for i in range(self.sizes.throughput_reps):
            n = BASE[CODEX] + i
            cpu0 = procs.cpu_seconds(session.pid)
            turn = await session.run_turn(f"{tag('tp', n)} stream fast", timeout=120)
            cpu1 = procs.cpu_seconds(session.pid)
            request = self.hub.seen("tp", n)
            assert request is not None
            rows.append(
                {
                    "wall_s": (turn.t_completed_ns - request.t_arrival_ns) / 1e9,
                    "cpu_s": cpu1 - cpu0,
                    "notifications": turn.notifications,
                    "delta_notifications": len(turn.deltas),
                    "text_ok": turn.text == self.throughput_text
                    and turn.message_text in (None, self.throughput_text),
                }
            )
        self.raw.setdefault("throughput", {})[CODEX] = rows

    async def codex_cancel(self, session: codex_peer.CodexSession) -> None:
        rows = []
        for i in range(self.sizes.codex_cancel_reps):
            n = BASE[CODEX] + i
            marker = f"300.{self.nonce}{n:06d}"
            self.cancel_commands[n] = f"sh -c 'sleep {marker}; true' & sleep {marker}; wait"
            try:
                turn = await session.start_turn(f"{tag('cx', n)} run the slow command")
                pids = await _wait_sleepers(marker)
                dead: list[bool] = []

                def at_completed(
                    message: dict[str, Any], t: int, pids: list[int] = pids, dead: list[bool] = dead
                ) -> None:
                    if message.get("method") == "turn/completed" and not dead:
                        dead.append(not any(procs.alive(p) for p in pids))

                remove = session.client.listen(at_completed)
                t_cancel = time.perf_counter_ns()
                msg_id, answer = session.client.request(
                    "turn/interrupt", {"threadId": session.thread_id, "turnId": turn.turn_id}
                )
                await session.finish(turn, timeout=30)
                async with asyncio.timeout(30):
                    await answer
                remove()
                rows.append(
                    {
                        "latency_ms": (turn.t_completed_ns - t_cancel) / 1e6,
                        "answer_ms": (session.client.answered_ns[msg_id] - t_cancel) / 1e6,
                        "status": turn.status,
                        "processes": len(pids),
                        "dead_at_result": bool(dead and dead[0]),
                        "survivors_after_1s": await _survivors_after(pids, self.settle),
                    }
                )
            finally:
                procs.kill_all(procs.marked(marker))
        self.raw.setdefault("cancel", {})[CODEX] = rows

    async def codex_fork_rpc(self, session: codex_peer.CodexSession) -> None:
        """``thread/fork`` round trips on a thread of N items, loaded with
        ``thread/inject_items`` (a persisted thread: Codex forks from its rollout)."""
        out: dict[str, list[float]] = {}
        try:
            for size in self.sizes.fork_codex_sizes:
                result = await session.client.call("thread/start", {"cwd": str(session.workspace)})
                thread_id = result["thread"]["id"]
                items = [item for step in core_steps(size) for item in step]
                for start in range(0, len(items), 5000):
                    await session.client.call(
                        "thread/inject_items",
                        {"threadId": thread_id, "items": items[start : start + 5000]},
                        timeout=120,
                    )
                reps = self.sizes.fork_wire_reps if size <= 10_000 else 1  # ~5 s each
                times = []
                for _ in range(reps):
                    t0 = time.perf_counter_ns()
                    await session.client.call(
                        "thread/fork",
                        {"threadId": thread_id, "excludeTurns": True, "ephemeral": True},
                        timeout=120,
                    )
                    times.append((time.perf_counter_ns() - t0) / 1e6)
                out[str(size)] = times
                if size == self.sizes.fork_codex_sizes[0]:
                    session.thread_id = thread_id
                    await self.long_submit(size, session.run_turn, LONG[CODEX], CODEX)
        except (RpcError, TimeoutError, ConnectionError, KeyError) as exc:
            self.raw.setdefault("fork_rpc_errors", {})[CODEX] = str(exc)
        if out:
            self.raw.setdefault("fork_rpc", {})[CODEX] = out

    # --- the raw SDK -----------------------------------------------------------------------------

    async def sdk(self) -> None:
        jobs: list[str] = []
        if self.wants("first-delta") or self.wants("submit"):
            reps = self.sizes.first_delta_reps
            jobs += [f"typed:fd:{BASE[SDK_TYPED]}:{reps}", f"lines:fd:{BASE[SDK_LINES]}:{reps}"]
        if self.wants("throughput"):
            jobs += [
                f"lines:tp:{BASE[SDK_LINES]}:{self.sizes.throughput_reps}",
                f"typed:tp:{BASE[SDK_TYPED]}:{self.sizes.typed_reps}",
            ]
        if jobs:
            rows = await self._sdk_worker(jobs)
            for who, mode in ((SDK_TYPED, "typed"), (SDK_LINES, "lines")):
                self._sdk_rows(who, [row for row in rows if row["mode"] == mode])

    def _sdk_rows(self, contestant: str, rows: list[dict[str, Any]]) -> None:
        expected = hashlib.sha256(self.throughput_text.encode()).hexdigest()
        first, submit, throughput = [], [], []
        for row in rows:
            request = self.hub.seen(row["kind"], row["n"])
            assert request is not None and request.t_first_delta_ns is not None
            if row["kind"] == "fd":
                submit.append((request.t_arrival_ns - row["t_call_ns"]) / 1e6)
                first.append((row["t_first_ns"] - request.t_first_delta_ns) / 1e6)
            else:
                throughput.append(
                    {
                        "wall_s": (row["t_done_ns"] - request.t_arrival_ns) / 1e9,
                        "cpu_s": row["cpu_ns"] / 1e9,
                        "notifications": None,
                        "delta_notifications": None,
                        "text_ok": row["sha256"] == expected,
                    }
                )
        if first:
            self.raw.setdefault("first_delta", {})[contestant] = first
            self.raw.setdefault("submit", {})[contestant] = submit
        if throughput:
            self.raw.setdefault("throughput", {})[contestant] = throughput

    async def _sdk_worker(self, jobs: list[str]) -> list[dict[str, Any]]:
        args = [str(BENCH_DIR / "sdk_worker.py"), "--base-url", self.hub.base_url]
        for job in jobs:
            args += ["--job", job]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr_file("sdk-worker"),
        )
        async with asyncio.timeout(300):
            stdout, _ = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError("the SDK worker failed; see logs/sdk-worker.log")
        lines = [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]
        self.raw.setdefault("sdk_import_ms", []).extend(
            row["import_ms"] for row in lines if "import_ms" in row
        )
        return [row for row in lines if "n" in row]

    # --- the agent core in-process ---------------------------------------------------------------

    async def core(self) -> None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(BENCH_DIR / "core_worker.py"),
            "--sizes",
            ",".join(str(s) for s in self.sizes.fork_sizes),
            "--reps",
            str(self.sizes.fork_reps),
            "--memory-items",
            str(self.sizes.memory_items),
            "--serialise-sizes",
            ",".join(str(s) for s in self.sizes.fork_wire_sizes),
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr_file("core-worker"),
        )
        async with asyncio.timeout(300):
            stdout, _ = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError("the core worker failed; see logs/core-worker.log")
        self.raw["core"] = json.loads(stdout)

    # --- figures ---------------------------------------------------------------------------------

    def assemble(self) -> Results:
        from bench.assemble import assemble

        return assemble(self)
