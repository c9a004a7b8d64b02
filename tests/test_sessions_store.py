"""The session store in-process: real agents on the fake model write their
sessions; the store lists, resumes (repairing what a crash left), deletes and
prunes them, and says what it cannot read."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.agent import Agent
from agentls.agent.errors import InvalidSnapshot
from agentls.agent.items import user_message
from agentls.agent.settings import SettingChange
from agentls.agent.snapshot import check_items
from agentls.model.types import Item
from agentls.sessions import journal
from agentls.sessions.entries import build
from agentls.sessions.paths import state_root, workspace_folder
from agentls.sessions.replay import INTERRUPTED_OUTPUT
from agentls.sessions.store import SessionBusy, SessionNotFound, SessionStore
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, EventLog, running_agent

KEY = "sk-test-STORE-distinctive-0a9b8c7d6e5f"


def title(item: Item) -> str:
    return f"call {item.get('name')}"


def store_for(tmp_path: Path, workspace: Path, retention: int = 200) -> SessionStore:
    folder = workspace_folder(workspace, {"AGENTLS_STATE_DIR": str(tmp_path / "state")})
    return SessionStore(
        folder, workspace=workspace, model="test-model", retention=retention, secret=KEY
    )


def recorded_agent(
    fake: FakeModel, store: SessionStore, workspace: Path
) -> AbstractAsyncContextManager[tuple[Agent, EventLog]]:
    return running_agent(fake.base_url, workspace, recorder=store.recorder(), api_key=KEY)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def texts(items: list[Item]) -> list[str]:
    out = []
    for item in items:
        if item.get("type") == "message":
            out.append("".join(part.get("text", "") for part in item["content"]))
        elif item.get("type") == "function_call_output":
            out.append(item["output"])
    return out


# --- where sessions live ---------------------------------------------------------------


def test_the_state_folder_follows_xdg_and_the_override(tmp_path: Path) -> None:
    assert state_root({"AGENTLS_STATE_DIR": "/x/y"}) == Path("/x/y")
    assert state_root({"XDG_STATE_HOME": "/s"}) == Path("/s/agentls")
    assert state_root({"XDG_STATE_HOME": "relative"}) == Path.home() / ".local/state/agentls"
    a, b = tmp_path / "one" / "app", tmp_path / "two" / "app"
    env = {"AGENTLS_STATE_DIR": "/st"}
    assert workspace_folder(a, env).name.startswith("app-")
    assert workspace_folder(a, env) != workspace_folder(b, env)
    assert workspace_folder(a, env).parent == Path("/st/sessions")


# --- save, list, resume ------------------------------------------------------------------


async def test_a_session_is_saved_step_by_step_and_resumed(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace)
    async with FakeModel() as fake, recorded_agent(fake, store, workspace) as (agent, _):
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "echo one"}, call_id="c1"),
            Reply.text("first answer"),
            Reply.text("second answer"),
        )
        assert store.list() == [], "an empty pane is no session yet"
        agent.change_setting(SettingChange("effort", "high"))
        with anyio.fail_after(WAIT):
            await agent.prompt("Fix the tests\nin src/, please")
            await agent.prompt("and now the docs")
        items = agent.history.items()
        (info,) = store.list()
        assert info.session_id == agent.session_id
        assert info.title == "Fix the tests" and info.turns == 2 and info.error is None
        with pytest.raises(SessionBusy):
            store.resume(agent.session_id, title)  # open: its agent runs
    # The agent has stopped: the session can be resumed, by another store too.
    resumed = store_for(tmp_path, workspace).resume(info.session_id, title)
    try:
        assert resumed.items == json.loads(json.dumps(items))
        assert resumed.settings.effort == "high"
        assert resumed.turns == 2 and resumed.title == "Fix the tests"
        assert resumed.notice is None and not resumed.repair.interrupted
        assert build(resumed.items, resumed.marks, title) == [
            {"role": "user", "text": "Fix the tests\nin src/, please"},
            {
                "role": "tool",
                "text": "call exec_command",
                "tool": "exec_command",
                "status": "completed",
            },
            {"role": "assistant", "text": "first answer"},
            {"role": "user", "text": "and now the docs"},
            {"role": "assistant", "text": "second answer"},
        ]
    finally:
        resumed.recorder.close()


async def test_steers_and_a_fork_keep_their_roles(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace)
    async with FakeModel() as fake, recorded_agent(fake, store, workspace) as (agent, _):
        gate = fake.gate()
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "true"}, call_id="c1").with_hold(gate),
            Reply.text("steered answer"),
        )
        turn = agent.prompt("start")
        await fake.wait_for_requests(1, timeout=WAIT)
        turn.control.steer("use tabs")
        gate.release()
        with anyio.fail_after(WAIT):
            await turn
        fork = agent.fork()
        try:
            recorder = fork.recorder
            assert recorder is not None and recorder.session_id != agent.session_id
            shown = recorder.entries(title)  # type: ignore[attr-defined]
        finally:
            await fork.shutdown()
    assert [(e["role"], e["text"]) for e in shown if e["role"] != "tool"] == [
        ("user", "start"),
        ("steer", "use tabs"),
        ("assistant", "steered answer"),
    ]
    # The fork ran no turn: it is not saved (nothing of its own to keep).
    assert [info.session_id for info in store.list()] == [agent.session_id]


async def test_a_compaction_is_saved_as_a_replacement(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace)
    async with FakeModel() as fake, recorded_agent(fake, store, workspace) as (agent, _):
        fake.script(Reply.text("long answer"), Reply.text("after"))
        with anyio.fail_after(WAIT):
            await agent.prompt("keep me")
        summary: Item = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Summary: we did things."}],
        }
        agent.history.replace([user_message("keep me"), summary])
        with anyio.fail_after(WAIT):
            await agent.prompt("go on")
        session_id = agent.session_id
    resumed = store.resume(session_id, title)
    resumed.recorder.close()
    shown = build(resumed.items, resumed.marks, title)
    assert [(e["role"], e["text"]) for e in shown] == [
        ("user", "keep me"),
        ("summary", "Summary: we did things."),
        ("user", "go on"),
        ("assistant", "after"),
    ]


# --- a server that stopped mid-turn ------------------------------------------------------


def write_journal(folder: Path, session_id: str, records: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def header(session_id: str, **extra: Any) -> list[dict[str, Any]]:
    return [
        {
            "t": "header",
            "format": "agentls.session",
            "version": 1,
            "sessionId": session_id,
            "createdAt": "2025-01-02T03:04:05Z",
            "title": "t",
            **extra,
        },
        {"t": "settings", "effort": "low", "fastMode": False, "approval": "never"},
    ]


def call(call_id: str, cmd: str) -> Item:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "exec_command",
        "arguments": json.dumps({"cmd": cmd}),
    }


def test_a_crash_mid_tool_call_is_repaired_and_reported(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace)
    sid = "a" * 32
    path = write_journal(
        store.folder,
        sid,
        [
            *header(sid),
            {"t": "turn", "turnId": 1},
            {"t": "commit", "items": [user_message("done turn")]},
            {"t": "commit", "items": [{"type": "message", "role": "assistant", "content": []}]},
            {"t": "end", "turnId": 1, "status": "completed"},
            {"t": "turn", "turnId": 2},
            {"t": "commit", "items": [user_message("crashing turn")]},
            {"t": "step", "items": [call("c1", "make"), call("c2", "sleep 9")]},
            {
                "t": "output",
                "item": {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            },
            {"t": "pending", "queued": ["queued prompt"], "steers": ["a steer"]},
        ],
    )
    resumed = store.resume(sid, title)
    resumed.recorder.close()
    check_items(resumed.items)  # no unanswered call: the model would take it
    assert texts(resumed.items) == [
        "done turn",
        "",
        "crashing turn",
        "ok",
        INTERRUPTED_OUTPUT,
        "a steer",
    ]
    assert resumed.repair.interrupted and resumed.repair.unsent == ["queued prompt"]
    notice = resumed.notice or ""
    assert "interrupted" in notice and "“call exec_command” did not finish" in notice
    assert "1 queued prompt never sent: “queued prompt”" in notice and "1 steer" in notice
    assert resumed.turns == 2
    shown = build(resumed.items, resumed.marks, title)
    assert [e.get("status") for e in shown if e["role"] == "tool"] == ["completed", "interrupted"]
    assert shown[-1] == {"role": "steer", "text": "a steer"}
    # The repair is in the journal: resuming again finds nothing to repair.
    again = store.resume(sid, title)
    again.recorder.close()
    assert again.items == resumed.items and again.notice is None
    assert path.read_text().count('"t":"repair"') == 1


def test_a_journal_cut_short_loses_only_its_last_line(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace)
    sid = "b" * 32
    path = write_journal(
        store.folder,
        sid,
        [*header(sid), {"t": "turn", "turnId": 1}, {"t": "commit", "items": [user_message("hi")]}],
    )
    with path.open("a") as f:
        f.write('{"t":"commit","items":[{"type":"mess')  # the kill -9 came mid-write
    (info,) = store.list()
    assert info.error is None
    resumed = store.resume(sid, title)
    resumed.recorder.close()
    assert texts(resumed.items) == ["hi"]
    assert "cut short" in (resumed.notice or "")
    assert path.read_text().endswith("\n")  # the torn line is gone, the repair follows
    journal.read(path)


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda p: p.write_text(p.read_text().replace('"turn"', '"turn', 1)), "line 3 is damaged"),
        (lambda p: p.write_text(p.read_text().replace('"version": 1', '"version": 7', 1)), "newer"),
        (lambda p: p.write_text("not a session\n"), "line 1 is damaged"),
        (lambda p: p.write_text(""), "empty"),
        (
            lambda p: p.write_text(
                p.read_text() + json.dumps({"t": "commit", "items": [call("x", "y")]}) + "\n"
            ),
            "has no output",
        ),
    ],
    ids=["corrupt", "future", "foreign", "empty", "unanswered"],
)
def test_unreadable_sessions_are_reported_and_skipped(
    tmp_path: Path, workspace: Path, damage: Callable[[Path], Any], says: str
) -> None:
    store = store_for(tmp_path, workspace)
    good, bad = "c" * 32, "d" * 32
    write_journal(store.folder, good, [*header(good), {"t": "turn", "turnId": 1}])
    path = write_journal(
        store.folder,
        bad,
        [*header(bad), {"t": "turn", "turnId": 1}, {"t": "commit", "items": [user_message("x")]}],
    )
    damage(path)
    listed = {info.session_id: info for info in store.list()}
    assert set(listed) == {good, bad}
    assert listed[good].error is None and listed[good].turns == 1
    if says != "has no output":  # a readable journal with a bad conversation lists fine
        assert says in (listed[bad].error or "") and "unreadable" in listed[bad].title
    with pytest.raises(SessionNotFound, match=says):
        store.resume(bad, title)
    store.resume(good, title).recorder.close()  # the rest still loads
    store.delete(bad)  # and the user can get rid of it
    assert [info.session_id for info in store.list()] == [good]


def test_a_lost_summary_is_rebuilt_from_the_journal(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace)
    sid = "e" * 32
    write_journal(store.folder, sid, [*header(sid, turns=3), {"t": "turn", "turnId": 1}])
    (store.folder / f"{sid}.json").write_text("{garbage")
    (info,) = store.list()
    assert info.turns == 4 and info.title == "t" and info.created_at == "2025-01-02T03:04:05Z"
    assert json.loads((store.folder / f"{sid}.json").read_text())["turns"] == 4


# --- delete, retention, secrets -----------------------------------------------------------


def test_delete_refuses_a_session_another_server_has_open(tmp_path: Path, workspace: Path) -> None:
    first, second = store_for(tmp_path, workspace), store_for(tmp_path, workspace)
    sid = "f" * 32
    write_journal(first.folder, sid, [*header(sid)])
    resumed = first.resume(sid, title)
    with pytest.raises(SessionBusy, match="another agentls server"):
        second.delete(sid)
    with pytest.raises(SessionBusy):
        second.resume(sid, title)
    resumed.recorder.close()
    second.delete(sid)
    assert second.list() == []
    with pytest.raises(SessionNotFound):
        second.delete(sid)
    with pytest.raises(SessionNotFound, match="not a session id"):
        second.delete("../../etc/passwd")


async def test_retention_keeps_the_newest_sessions(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace, retention=2)
    made = []
    async with FakeModel() as fake:
        for n in range(4):
            fake.script(Reply.text(f"answer {n}"))
            async with recorded_agent(fake, store, workspace) as (agent, _):
                with anyio.fail_after(WAIT):
                    await agent.prompt(f"prompt {n}")
                made.append(agent.session_id)
                os.utime(store.folder / f"{agent.session_id}.jsonl", (n + 1, n + 1))
    assert [info.session_id for info in store.list()] == [made[3], made[2]]
    assert sorted(p.name for p in store.folder.iterdir()) == sorted(
        f"{sid}.{ext}" for sid in made[2:] for ext in ("json", "jsonl")
    )


async def test_retention_zero_saves_nothing(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace, retention=0)
    async with FakeModel() as fake, recorded_agent(fake, store, workspace) as (agent, _):
        fake.script(Reply.text("ok"))
        with anyio.fail_after(WAIT):
            await agent.prompt("hello")
    assert not (tmp_path / "state").exists()


async def test_the_api_key_is_never_written(tmp_path: Path, workspace: Path) -> None:
    (workspace / "leak.txt").write_text(f"OPENAI_API_KEY={KEY}\n")
    store = store_for(tmp_path, workspace)
    async with FakeModel() as fake, recorded_agent(fake, store, workspace) as (agent, _):
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "cat leak.txt"}),
            Reply.text(f"I saw {KEY}"),
        )
        with anyio.fail_after(WAIT):
            await agent.prompt(f"what is in leak.txt? is it {KEY}?")
        assert KEY in json.dumps(agent.history.items())  # the conversation had it...
    files = list((tmp_path / "state").rglob("*"))
    assert any(p.suffix == ".jsonl" for p in files)
    for path in files:
        if path.is_file():
            assert KEY not in path.read_text(), path  # ...the disk never did
            assert path.stat().st_mode & 0o077 == 0, "sessions are private"


# --- what a resumed conversation may hold --------------------------------------------------


@pytest.mark.parametrize(
    ("items", "says"),
    [
        (
            [{"type": "custom_tool_call", "call_id": "k", "name": "p", "input": "x"}],
            "has no output",
        ),
        ([{"type": "custom_tool_call_output", "call_id": "k", "output": "x"}], "never made"),
        ([{"type": "local_shell_call", "call_id": "s", "action": {}}], "has no output"),
        ([{"type": "function_call", "name": "x"}], "without call_id"),
    ],
)
def test_every_kind_of_call_needs_its_output(items: list[Item], says: str) -> None:
    with pytest.raises(InvalidSnapshot, match=says):
        check_items(items)


def test_paired_calls_of_every_kind_pass() -> None:
    check_items(
        [
            {"type": "custom_tool_call", "call_id": "k", "name": "p", "input": "x"},
            {"type": "custom_tool_call_output", "call_id": "k", "output": "x"},
            {"type": "local_shell_call", "call_id": "s", "action": {}},
            {"type": "local_shell_call_output", "id": "s", "output": "x"},
        ]
    )


# --- what agent/history keeps ------------------------------------------------------------


async def test_history_says_when_its_bound_dropped_events(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentls.agent import events as ev
    from agentls.lsp import relay as relays

    monkeypatch.setattr(relays, "HISTORY_EVENTS", 5)
    sent: list[dict[str, Any]] = []
    relay = relays.EventRelay(sent.append, lambda pane, event: None)
    relay.pane_event("main", "pane.opened", start=True, entries=[])
    for n in range(8):
        relay.forward("main", ev.SteerAdmitted(turn_id=1, text=f"s{n}"))
    kept = relay.history("main", 0)
    assert [e["seq"] for e in kept.events] == [5, 6, 7, 8, 9] and kept.last_seq == 9
    assert kept.complete is False  # seqs 1-4 are gone
    assert relay.history("main", 4).complete is True
    assert [e["seq"] for e in relay.history("main", 7).events] == [8, 9]
    assert relay.history("main", 9).events == []
    relay.pane_event("main", "pane.opened", start=True, entries=[])  # a new session
    fresh = relay.history("main", 0)
    assert [e["seq"] for e in fresh.events] == [10] and fresh.complete is True
    assert relay.history("fork-1", 0) == relays.Retained([], 0, True)
    assert [e["seq"] for e in sent] == list(range(1, 11))
