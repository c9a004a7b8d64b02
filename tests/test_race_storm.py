"""The race storm: seeded random interleavings of every request against the
real server and a fake model with random delays and tool calls that spawn
``sleep`` process trees. After each run:

- every request was answered exactly once;
- every steer was admitted (and applied, or its turn ended early with the
  steer kept), promoted to a turn of its own, or refused with a reason;
- ``seq`` is contiguous per pane; every turn has exactly one ``turn.finished``;
- every progress ``begin`` has exactly one ``end``;
- no process of any turn is alive; the server still answers, and exits 0.

``make test`` runs a handful of seeds; ``AGENTLS_STORM=long`` runs many. A
failing seed is re-run with ``AGENTLS_STORM_SEEDS=<seed>``.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentls.client.rpc import RpcClient, RpcError
from agentls.testing.fake_model import FakeModel, RecordedRequest, Reply

from .support import needle, processes_with

_MODE = os.environ.get("AGENTLS_STORM", "short")
if os.environ.get("AGENTLS_STORM_SEEDS"):
    SEEDS = [int(s) for s in os.environ["AGENTLS_STORM_SEEDS"].split(",")]
else:
    SEEDS = list(range(1, 201)) if _MODE == "long" else [1, 2, 3, 4, 5]
ACTIONS = 40


def model_policy(rng: random.Random, tag: str) -> Any:
    """Commands sleep for a time ending in ``tag``'s digits: the oracle finds
    them by it, in the sandbox too (whose pids the commands cannot print)."""

    def reply(request: RecordedRequest) -> Reply:
        roll = rng.random()
        if roll < 0.35:
            pause = rng.choice(["0.05", "0.20", "30.00"]) + tag
            tree = f"sleep {pause} & sh -c 'sleep {pause} & wait' & wait"
            return Reply.tool_call("exec_command", {"cmd": tree}, delay_first=rng.random() * 0.05)
        if roll < 0.45:
            return Reply.tool_call("read_file", {"path": "notes.txt"})
        words = " ".join(f"w{n}" for n in range(rng.randint(3, 30)))
        return Reply.text(words, delay=rng.random() * 0.01, delay_first=rng.random() * 0.05)

    return reply


@dataclass
class Storm:
    client: RpcClient
    rng: random.Random
    events: list[dict[str, Any]] = field(default_factory=list)
    progress: dict[Any, list[str]] = field(default_factory=lambda: defaultdict(list))
    responses: Counter[Any] = field(default_factory=Counter)
    submits: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    auxiliaries: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    others: list[asyncio.Future[Any]] = field(default_factory=list)
    steers: list[tuple[str, asyncio.Future[Any]]] = field(default_factory=list)
    panes: list[str] = field(default_factory=lambda: ["main"])
    futures: dict[Any, asyncio.Future[Any]] = field(default_factory=dict)
    sent: dict[Any, str] = field(default_factory=dict)

    def on_event(self, params: dict[str, Any]) -> None:
        self.events.append(params)

    def on_progress(self, params: dict[str, Any]) -> None:
        self.progress[params["token"]].append(params["value"]["kind"])

    def request(self, method: str, params: dict[str, Any]) -> tuple[int, asyncio.Future[Any]]:
        msg_id, future = self.client.request(method, params)
        self.sent[msg_id] = f"{method} {params}"
        self.futures[msg_id] = future
        return msg_id, future

    def pane(self) -> str:
        return self.rng.choice(self.panes)

    async def act(self, n: int) -> None:
        action = self.rng.choice(
            ["submit"] * 5
            + ["steer"] * 3
            + ["cancelRequest"] * 2
            + [
                "cancel",
                "fork",
                "closePane",
                "newSession",
                "setEffort",
                "auxiliary",
                "cancelAuxiliary",
            ]
        )
        if action == "submit":
            token = f"storm-{n}"
            msg_id, future = self.request(
                "agent/submit", {"pane": self.pane(), "prompt": f"task {n}", "workDoneToken": token}
            )
            self.submits[msg_id] = future
        elif action == "steer":
            text = f"steer {n}"
            _, future = self.request("agent/steer", {"pane": self.pane(), "prompt": text})
            self.steers.append((text, future))
        elif action == "cancelRequest":
            pending = [i for i, f in self.submits.items() if not f.done()]
            if pending:
                self.client.cancel(self.rng.choice(pending))
        elif action == "cancel":
            params: dict[str, Any] = {"pane": self.pane()}
            if self.rng.random() < 0.5:
                started = [e["turnId"] for e in self.events if e["kind"] == "turn.started"]
                if started:
                    params["turnId"] = self.rng.choice(started)
            self.others.append(self.request("agent/cancel", params)[1])
        elif action == "fork":
            future = self.request("agent/fork", {})[1]
            self.others.append(future)
            try:
                result = await asyncio.wait_for(asyncio.shield(future), 5)
                self.panes.append(result["pane"])
            except (RpcError, TimeoutError):
                pass
        elif action == "closePane":
            pane = self.pane()
            future = self.request("agent/closePane", {"pane": pane})[1]
            self.others.append(future)
            if pane != "main":
                self.panes.remove(pane)
        elif action == "newSession":
            self.others.append(self.request("agent/newSession", {"pane": self.pane()})[1])
        elif action == "setEffort":
            effort = self.rng.choice(["low", "medium", "high"])
            self.others.append(self.request("agent/setEffort", {"effort": effort})[1])
        elif action == "auxiliary":
            msg_id, future = self.request("agent/auxiliary", {"prompt": f"aux {n}"})
            self.auxiliaries[msg_id] = future
        elif action == "cancelAuxiliary":
            pending = [i for i, f in self.auxiliaries.items() if not f.done()]
            if pending:
                self.client.cancel(self.rng.choice(pending))


def count_responses(client: RpcClient, counter: Counter[Any]) -> None:
    original = client._dispatch

    def dispatch(message: dict[str, Any]) -> None:
        if "method" not in message:
            counter[message.get("id")] += 1
        original(message)

    client._dispatch = dispatch  # type: ignore[method-assign]


@pytest.mark.parametrize("seed", SEEDS)
async def test_race_storm(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    (tmp_path / "notes.txt").write_text("storm notes\n")
    async with FakeModel() as fake:
        tag = needle().rsplit(".", 1)[1]
        fake.on_request(model_policy(random.Random(seed * 7919), tag))
        client = await RpcClient.spawn([sys.executable, "-m", "agentls", "serve"])
        storm = Storm(client, rng)
        count_responses(client, storm.responses)
        client.on_notification("agent/event", storm.on_event)
        client.on_notification("$/progress", storm.on_progress)
        await client.initialize(
            {"workspace": str(tmp_path), "baseUrl": fake.base_url}, str(tmp_path)
        )
        for n in range(ACTIONS):
            await storm.act(n)
            await asyncio.sleep(rng.random() * 0.04)  # the random schedule, not a synchronisation

        # Wind down: stop whatever still runs, then every request must be answered.
        for pane in list(storm.panes):
            storm.others.append(storm.request("agent/cancel", {"pane": pane})[1])
        pending = [
            *storm.submits.values(),
            *storm.auxiliaries.values(),
            *storm.others,
            *(f for _, f in storm.steers),
        ]
        _, not_done = await asyncio.wait(pending, timeout=60)
        unanswered = [storm.sent[i] for i, f in storm.futures.items() if f in not_done]
        assert not not_done, f"seed {seed}: never answered: {unanswered}"
        assert await client.call("agent/setEffort", {"effort": "low"}) == {
            "pane": "main",
            "effort": "low",
        }, f"seed {seed}: the server stopped answering"
        code = await client.shutdown()
        assert code == 0, f"seed {seed}: exit code {code}"
        pids = processes_with(tag)

    check_invariants(seed, storm, pids)


def check_invariants(seed: int, storm: Storm, pids: list[int]) -> None:
    where = f"seed {seed}"
    # Exactly one response per request.
    for msg_id in storm.sent:
        assert storm.responses[msg_id] == 1, (
            f"{where}: request {msg_id} got {storm.responses[msg_id]}"
        )
    # Submits: a TurnResult, or a protocol error for a pane that was gone.
    for future in storm.submits.values():
        if future.exception() is None:
            assert future.result()["status"] in ("completed", "cancelled"), (
                f"{where}: {future.result()}"
            )
        else:
            error = future.exception()
            assert isinstance(error, RpcError) and error.code in (-32001, -32003), (
                f"{where}: {error}"
            )
    # seq contiguous per pane.
    by_pane: dict[str, list[int]] = defaultdict(list)
    for event in storm.events:
        by_pane[event["pane"]].append(event["seq"])
    for pane, seqs in by_pane.items():
        assert seqs == list(range(1, len(seqs) + 1)), f"{where}: pane {pane} seq {seqs}"
    # Exactly one turn.finished per turn that started.
    finished = Counter(e["turnId"] for e in storm.events if e["kind"] == "turn.finished")
    assert all(count == 1 for count in finished.values()), f"{where}: {finished}"
    for event in storm.events:
        if event["kind"] == "turn.started":
            assert finished[event["turnId"]] == 1, f"{where}: turn {event['turnId']} never finished"
    # Steers: never silently lost.
    applied = {e["text"] for e in storm.events if e["kind"] == "steer.applied"}
    status = {e["turnId"]: e["status"] for e in storm.events if e["kind"] == "turn.finished"}
    for text, future in storm.steers:
        if future.exception() is not None:
            error = future.exception()
            assert isinstance(error, RpcError) and error.message, f"{where}: steer failed silently"
            continue
        result = future.result()
        if result["outcome"] == "admitted":
            kept = status.get(result["turnId"]) in ("cancelled", "failed")
            assert text in applied or kept, f"{where}: admitted steer {text!r} lost"
        else:
            assert result["turnId"] in status, f"{where}: promoted steer {text!r} never ran"
    # Progress: one begin, one end, end last.
    for token, kinds in storm.progress.items():
        assert kinds.count("begin") == 1 and kinds.count("end") == 1, f"{where}: {token} {kinds}"
        assert kinds[0] == "begin" and kinds[-1] == "end", f"{where}: {token} {kinds}"
    # No process of any turn is alive.
    assert not pids, f"{where}: processes still alive: {pids}"
