"""Sessions end to end: real server processes (started, stopped, killed with
SIGKILL), the strict fake model over HTTP, the store on disk."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from agentls.client.rpc import RpcClient, RpcError
from agentls.sessions.paths import workspace_folder
from agentls.sessions.replay import INTERRUPTED_OUTPUT
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, pids_in, until_set

KEY = "sk-test-SESSIONS-distinctive-1f2e3d4c5b6a"


class Client(RpcClient):
    """An editor that keeps every message it gets, in the order it got them."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.log: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    def _dispatch(self, message: dict[str, Any]) -> None:
        self.log.append(message)
        self.changed.set()
        if message.get("method") == "window/showMessageRequest":
            return  # a question the user has not answered (yet)
        super()._dispatch(message)

    @property
    def events(self) -> list[dict[str, Any]]:
        return [m["params"] for m in self.log if m.get("method") == "agent/event"]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]

    async def until(self, predicate: Callable[[], Any], timeout: float = WAIT) -> Any:
        return await until_set(self.changed, predicate, timeout)


def env_for(state: Path) -> dict[str, str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "AGENTLS_STATE_DIR": str(state)}
    env.pop("OPENAI_BASE_URL", None)
    return env


@asynccontextmanager
async def server(
    fake: FakeModel, workspace: Path, state: Path, **options: Any
) -> AsyncIterator[Client]:
    client = await Client.spawn([sys.executable, "-m", "agentls", "serve"], env=env_for(state))
    try:
        await asyncio.wait_for(
            client.initialize(
                {"workspace": str(workspace), "baseUrl": fake.base_url, **options},
                str(workspace),
            ),
            WAIT,
        )
        yield client
    finally:
        if client.process.returncode is None:
            await client.shutdown()


async def call(client: Client, method: str, params: Any) -> Any:
    return await client.call(method, params, timeout=WAIT)


async def error_of(client: Client, method: str, params: Any) -> RpcError:
    with pytest.raises(RpcError) as caught:
        await call(client, method, params)
    return caught.value


def texts(body: dict[str, Any]) -> list[str]:
    out = []
    for item in body["input"]:
        if item.get("type") == "message":
            out.append("".join(part.get("text", "") for part in item["content"]))
        elif item.get("type") == "function_call_output":
            out.append(item["output"])
        elif item.get("type") == "function_call":
            out.append(f"call {json.loads(item['arguments'])['cmd']}")
    return out


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


# --- saved, listed, resumed -----------------------------------------------------------------


async def test_a_new_server_lists_and_resumes_a_saved_session(workspace: Path, state: Path) -> None:
    async with FakeModel() as fake:
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "echo hello"}, call_id="c1"),
            Reply.text("It says hello."),
            Reply.text("Still hello."),
        )
        async with server(fake, workspace, state) as first:
            assert (await call(first, "agent/sessions", {})) == {"sessions": []}
            result = await call(first, "agent/submit", {"prompt": "What does it say?"})
            assert result["status"] == "completed"
            (listed,) = (await call(first, "agent/sessions", {}))["sessions"]
            assert listed["pane"] == "main"
        async with server(fake, workspace, state) as second:
            (session,) = (await call(second, "agent/sessions", {}))["sessions"]
            assert session["sessionId"] == listed["sessionId"]
            assert session["title"] == "What does it say?" and session["turns"] == 1
            assert session["pane"] is None and session["createdAt"].endswith("Z")
            resumed = await call(second, "agent/resume", {"sessionId": session["sessionId"]})
            assert resumed["pane"] == "main" and resumed["sessionId"] == session["sessionId"]
            assert resumed["turns"] == 1 and resumed["interrupted"] is False
            event = await second.until(lambda: second.of("session.resumed"))
            assert event[0]["entries"] == [
                {"role": "user", "text": "What does it say?"},
                {
                    "role": "tool",
                    "text": "Running `echo hello`",
                    "tool": "exec_command",
                    "status": "completed",
                },
                {"role": "assistant", "text": "It says hello."},
            ]
            (listed,) = (await call(second, "agent/sessions", {}))["sessions"]
            assert listed["pane"] == "main"
            result = await call(second, "agent/submit", {"prompt": "And now?"})
            assert result["finalMessage"] == "Still hello."
    assert texts(fake.requests[2].body) == [
        "What does it say?",
        "call echo hello",
        fake.requests[1].body["input"][-1]["output"],
        "It says hello.",
        "And now?",
    ]


async def test_kill_9_mid_tool_call_loses_nothing_that_was_said(
    workspace: Path, state: Path
) -> None:
    pids: list[int] = []
    async with FakeModel() as fake:
        fake.script(
            Reply.text("First turn done."),
            Reply.tool_call("exec_command", {"cmd": "echo pid=$$; sleep 300"}, call_id="slow"),
        )
        try:
            async with server(fake, workspace, state) as doomed:
                await call(doomed, "agent/submit", {"prompt": "turn one"})
                _, two = doomed.request("agent/submit", {"prompt": "turn two"})
                await doomed.until(
                    lambda: "pid=" in "".join(e["text"] for e in doomed.of("tool.output"))
                )
                pids = pids_in("".join(e["text"] for e in doomed.of("tool.output")))
                # With its own progress token, a submit goes to the pane at once;
                # commands to a pane are handled in order: once the steer is
                # admitted, the queued submit has been taken (and saved) too.
                _, three = doomed.request(
                    "agent/submit", {"prompt": "queued behind", "workDoneToken": "q"}
                )
                steer = await call(doomed, "agent/steer", {"prompt": "also check the logs"})
                assert steer["outcome"] == "admitted"
                doomed.process.send_signal(signal.SIGKILL)
                await asyncio.wait_for(doomed.process.wait(), WAIT)
                for unanswered in (two, three):
                    with pytest.raises(ConnectionError):
                        await asyncio.wait_for(unanswered, WAIT)
        finally:
            for pid in pids:  # the killed server's command outlives it
                with suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
        fake.script(Reply.text("Resumed fine."))
        async with server(fake, workspace, state) as second:
            (session,) = (await call(second, "agent/sessions", {}))["sessions"]
            assert session["turns"] == 2
            resumed = await call(second, "agent/resume", {"sessionId": session["sessionId"]})
            assert resumed["interrupted"] is True and resumed["unsent"] == ["queued behind"]
            (event,) = await second.until(lambda: second.of("session.resumed"))
            notice = event["notice"]
            assert "interrupted" in notice and "Running `echo pid=$$; sleep 300`" in notice
            assert "“queued behind”" in notice and "1 steer" in notice
            assert [(e["role"], e.get("status")) for e in event["entries"]] == [
                ("user", None),
                ("assistant", None),
                ("user", None),
                ("tool", "interrupted"),
                ("steer", None),
            ]
            result = await call(second, "agent/submit", {"prompt": "go on"})
            assert result["status"] == "completed", result
    # The strict fake refuses an unanswered call: it took this request.
    assert texts(fake.requests[-1].body) == [
        "turn one",
        "First turn done.",
        "turn two",
        "call echo pid=$$; sleep 300",
        INTERRUPTED_OUTPUT,
        "also check the logs",
        "go on",
    ]


# --- agent/history ----------------------------------------------------------------------------


async def test_history_and_live_events_are_gap_free_at_50_random_cut_points(
    workspace: Path, state: Path
) -> None:
    rng = random.Random(14)
    async with FakeModel() as fake:
        gate = fake.gate()
        fake.script(
            Reply.tool_call(
                "exec_command", {"cmd": "for i in $(seq 1 40); do echo line $i; sleep 0.005; done"}
            ),
            Reply.text(" ".join(f"w{i}" for i in range(120)), delay=0.002).with_hold(
                gate, after=40
            ),
        )
        async with server(fake, workspace, state) as client:
            # (request id, sinceSeq, answer)
            asked: list[tuple[int, int, asyncio.Future[Any]]] = []

            def ask() -> None:
                seen = [e["seq"] for e in client.events if e["pane"] == "main"]
                since = rng.randint(0, max(seen, default=0))
                msg_id, future = client.request("agent/history", {"sinceSeq": since})
                asked.append((msg_id, since, future))

            original = client._dispatch

            def dispatch(message: dict[str, Any]) -> None:
                original(message)
                event = message.get("method") == "agent/event"
                if event and len(asked) < 50 and rng.random() < 0.5:
                    ask()  # while the events stream: at random points of the turn

            client._dispatch = dispatch  # type: ignore[method-assign]
            _, submitted = client.request("agent/submit", {"prompt": "stream"})
            async with asyncio.timeout(WAIT):
                await gate.wait_reached()
            while len(asked) < 50:
                ask()
            await asyncio.wait_for(asyncio.gather(*(future for *_, future in asked)), WAIT)
            gate.release()
            await asyncio.wait_for(submitted, WAIT)
            live = client.events
            for request_id, since, future in asked:
                answer = future.result()
                position = next(i for i, m in enumerate(client.log) if m.get("id") == request_id)
                after = [
                    m["params"]
                    for m in client.log[position + 1 :]
                    if m.get("method") == "agent/event" and m["params"]["seq"] > answer["lastSeq"]
                ]
                rebuilt = answer["events"] + after
                assert rebuilt == [e for e in live if e["seq"] > since], since
                assert answer["complete"] is True
                assert answer["runningTurnId"] == live[0]["turnId"]
            seqs = [e["seq"] for e in live]
            assert seqs == list(range(1, len(seqs) + 1))
            assert len({since for _, since, _ in asked}) > 10
            after_turn = await call(client, "agent/history", {"sinceSeq": 0})
            assert after_turn["events"] == live and after_turn["runningTurnId"] is None
            assert after_turn["lastSeq"] == seqs[-1]


async def test_history_starts_at_the_pane_s_current_session(workspace: Path, state: Path) -> None:
    async with FakeModel() as fake:
        fake.script(Reply.text("one"), Reply.text("two"))
        async with server(fake, workspace, state) as client:
            await call(client, "agent/submit", {"prompt": "first"})
            await call(client, "agent/newSession", {})
            await call(client, "agent/submit", {"prompt": "second"})
            history = await call(client, "agent/history", {})
            kinds = [e["kind"] for e in history["events"]]
            assert kinds[0] == "pane.opened" and history["events"][0]["entries"] == []
            assert "turn.started" in kinds and history["complete"] is True
            assert history["events"][1]["prompt"] == "second"
            assert history["sessionId"] == history["events"][0]["sessionId"]
            missing = await error_of(client, "agent/history", {"pane": "fork-9"})
            assert missing.code == -32001


async def test_a_fork_shows_what_it_inherited_and_is_a_session_of_its_own(
    workspace: Path, state: Path
) -> None:
    async with FakeModel() as fake:
        fake.script(Reply.text("parent answer"), Reply.text("fork answer"))
        async with server(fake, workspace, state) as client:
            await call(client, "agent/submit", {"prompt": "parent prompt"})
            forked = await call(client, "agent/fork", {})
            opened = await client.until(
                lambda: [e for e in client.of("pane.opened") if e["pane"] == forked["pane"]]
            )
            assert [(e["role"], e["text"]) for e in opened[0]["entries"]] == [
                ("user", "parent prompt"),
                ("assistant", "parent answer"),
            ]
            main_history = await call(client, "agent/history", {})
            assert opened[0]["sessionId"] != main_history["sessionId"]
            await call(client, "agent/submit", {"pane": forked["pane"], "prompt": "fork prompt"})
            listed = (await call(client, "agent/sessions", {}))["sessions"]
            assert [(s["title"], s["pane"], s["turns"]) for s in listed] == [
                ("parent prompt (fork)", forked["pane"], 2),
                ("parent prompt", "main", 1),
            ]


# --- refusals and damage ------------------------------------------------------------------------


async def test_resume_and_delete_refuse_what_they_must(workspace: Path, state: Path) -> None:
    async with FakeModel() as fake:
        gate = fake.gate()
        fake.script(Reply.text("saved"), Reply.text("held").with_hold(gate))
        async with server(fake, workspace, state) as first:
            await call(first, "agent/submit", {"prompt": "keep me"})
            await call(first, "agent/newSession", {})
        async with server(fake, workspace, state) as client:
            (old,) = (await call(client, "agent/sessions", {}))["sessions"]
            missing = await error_of(client, "agent/resume", {"sessionId": "0" * 32})
            assert missing.code == -32005 and "no session" in missing.message
            bogus = await error_of(client, "agent/deleteSession", {"sessionId": "../x"})
            assert bogus.code == -32005
            _, running = client.request("agent/submit", {"prompt": "busy"})
            await fake.wait_for_requests(2, timeout=WAIT)
            busy = await error_of(client, "agent/resume", {"sessionId": old["sessionId"]})
            assert busy.code == -32004
            gate.release()
            await asyncio.wait_for(running, WAIT)
            await call(client, "agent/resume", {"sessionId": old["sessionId"]})
            open_one = await error_of(
                client, "agent/deleteSession", {"sessionId": old["sessionId"]}
            )
            assert open_one.code == -32004 and "main" in open_one.message
            forked = await call(client, "agent/fork", {})
            twice = await error_of(
                client, "agent/resume", {"sessionId": old["sessionId"], "pane": forked["pane"]}
            )
            assert twice.code == -32004
            await call(client, "agent/newSession", {})
            listed = (await call(client, "agent/sessions", {}))["sessions"]
            assert len(listed) == 2
            assert await call(client, "agent/deleteSession", {"sessionId": old["sessionId"]}) == {
                "deleted": True
            }
            left = (await call(client, "agent/sessions", {}))["sessions"]
            assert old["sessionId"] not in [s["sessionId"] for s in left]
            gone = await error_of(client, "agent/resume", {"sessionId": old["sessionId"]})
            assert gone.code == -32005
            negative = await error_of(client, "agent/sessions", {"limit": -1})
            assert negative.code == -32602


async def test_damaged_sessions_are_listed_reported_and_skipped(
    workspace: Path, state: Path
) -> None:
    async with FakeModel() as fake:
        fake.script(Reply.text("fine"))
        async with server(fake, workspace, state) as first:
            await call(first, "agent/submit", {"prompt": "a good one"})
        folder = workspace_folder(workspace, {"AGENTLS_STATE_DIR": str(state)})
        (folder / f"{'1' * 32}.jsonl").write_text('{"t":"header","format":"agentls.session",')
        future = {"t": "header", "format": "agentls.session", "version": 2}
        (folder / f"{'2' * 32}.jsonl").write_text(json.dumps(future) + "\n")
        async with server(fake, workspace, state) as client:
            logged: list[str] = []
            client.on_notification(
                "window/logMessage", lambda params: logged.append(params["message"])
            )
            listed = {
                s["sessionId"]: s for s in (await call(client, "agent/sessions", {}))["sessions"]
            }
            assert len(listed) == 3
            assert "unreadable" in listed["1" * 32]["title"] and "error" in listed["1" * 32]
            assert "newer agentls" in listed["2" * 32]["error"]
            await client.until(lambda: any("newer agentls" in m for m in logged))
            for bad in ("1" * 32, "2" * 32):
                refused = await error_of(client, "agent/resume", {"sessionId": bad})
                assert refused.code == -32005 and "unreadable" in refused.message
            good = next(s for s in listed.values() if "error" not in s)
            await call(client, "agent/resume", {"sessionId": good["sessionId"]})


async def test_the_api_key_is_never_in_the_store(workspace: Path, state: Path) -> None:
    (workspace / "notes.txt").write_text(f"export OPENAI_API_KEY={KEY}\n")
    async with FakeModel() as fake:
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "cat notes.txt; env | grep -c KEY"}),
            Reply.text(f"The file holds {KEY}."),
        )
        async with server(fake, workspace, state) as client:
            result = await call(client, "agent/submit", {"prompt": f"Is {KEY} in notes.txt?"})
            assert KEY in result["finalMessage"]
    stored = [p for p in state.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in stored)
    for path in stored:
        assert KEY not in path.read_text(), path


async def test_retention_is_a_setting(workspace: Path, state: Path) -> None:
    async with FakeModel() as fake:
        fake.script(*(Reply.text(f"answer {n}") for n in range(3)))
        async with server(fake, workspace, state, sessionRetention=2) as client:
            for n in range(3):
                await call(client, "agent/submit", {"prompt": f"session {n}"})
                await call(client, "agent/newSession", {})
            listed = (await call(client, "agent/sessions", {}))["sessions"]
            assert sorted(s["title"] for s in listed) == ["session 1", "session 2"]
        bad = await Client.spawn([sys.executable, "-m", "agentls", "serve"], env=env_for(state))
        try:
            with pytest.raises(RpcError, match="sessionRetention"):
                await asyncio.wait_for(
                    bad.initialize({"workspace": str(workspace), "sessionRetention": -1}, "/"),
                    WAIT,
                )
        finally:
            await bad.shutdown()
