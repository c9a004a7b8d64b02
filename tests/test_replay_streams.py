"""Twenty streams recorded from real Responses servers, replayed through the
real server and the real ``openai`` SDK (and through ``agentls exec``).

The recordings are read in place from ``../shared/conformance`` (never copied
here; ``AGENTLS_CONFORMANCE`` points elsewhere). The fake model serves a case's
k-th file, byte for byte, to the k-th request — and the recorded plain answer
after a recording's last tool call — while checking every request strictly, as
the real API would (an unanswered call, an item id with ``store: false``).
What each case must do is read from the recording itself: the answer text,
the calls that need answering, the reasoning items that must go back, the
error that must reach the user.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentls.testing.fake_model import FakeModel, FakeModelThread, RecordedRequest, Reply

from .lsp_support import AgentClient
from .support import WAIT

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = Path(os.environ.get("AGENTLS_CONFORMANCE") or REPO.parent / "shared" / "conformance")
STREAMS = CONFORMANCE / "responses_streams" / "streams"
FOLLOWUP = STREAMS / "_followup_text" / "0.sse"

if not STREAMS.is_dir():
    pytest.skip("skipped: ../shared/conformance not present", allow_module_level=True)

# The output item that answers each client-side call type.
OUTPUT_OF = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "shell_call": "shell_call_output",
    "local_shell_call": "local_shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def parse_sse(data: bytes) -> list[dict[str, Any]]:
    """The JSON events of an SSE body (written for the test, independently of
    the server's own parser)."""
    events = []
    for block in _EVENT_END.split(data):
        lines = [line for line in block.splitlines() if line.startswith(b"data:")]
        payload = b"\n".join(line[6:] if line.startswith(b"data: ") else line[5:] for line in lines)
        if payload.strip() and payload.strip() != b"[DONE]":
            events.append(json.loads(payload))
    return events


def message_text(item: dict[str, Any]) -> str:
    if item.get("type") != "message":
        return ""
    return "".join(
        str(part.get("text") or "")
        for part in item.get("content") or ()
        if part.get("type") == "output_text"
    )


@dataclass
class Response:
    """What one recorded response holds."""

    data: bytes
    items: list[dict[str, Any]] = field(default_factory=list)
    ending: str = "none"  # completed, failed, incomplete, error
    error: str = ""
    reasoning: str = ""

    @classmethod
    def read(cls, path: Path) -> Response:
        data = path.read_bytes()
        response = cls(data)
        final: list[dict[str, Any]] = []
        for event in parse_sse(data):
            kind = event.get("type")
            if kind == "response.output_item.done":
                response.items.append(event["item"])
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                response.reasoning += event.get("delta", "")
            elif kind == "response.completed" and response.ending == "none":
                response.ending = "completed"
                final = event["response"].get("output") or []
            elif kind == "response.failed" and response.ending == "none":
                response.ending = "failed"
                response.error = event["response"]["error"]["message"]
            elif kind == "response.incomplete" and response.ending == "none":
                response.ending = "incomplete"
                response.error = event["response"]["incomplete_details"]["reason"]
            elif kind == "error" and response.ending == "none":
                response.ending = "error"
                response.error = (event.get("error") or event)["message"]
        if not response.items:
            response.items = final
        return response

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [item for item in self.items if item.get("type") in OUTPUT_OF]

    @property
    def text(self) -> str:
        return "".join(message_text(item) for item in self.items)


@dataclass
class Case:
    name: str
    responses: list[Response]

    @classmethod
    def read(cls, name: str) -> Case:
        folder = STREAMS / name
        files = sorted(folder.glob("*.sse"), key=lambda path: int(path.stem))
        responses = [Response.read(path) for path in files]
        last = responses[-1]
        if last.ending == "completed" and last.calls:
            responses.append(Response.read(FOLLOWUP))  # the answer after the last call
        return cls(name, responses)

    @property
    def completes(self) -> bool:
        return self.responses[-1].ending == "completed"

    def reply(self, request: RecordedRequest) -> Reply:
        if request.index >= len(self.responses):
            raise AssertionError(f"{self.name}: request #{request.index} was not expected")
        return Reply.raw_sse(self.responses[request.index].data)


CASES = sorted(path.name for path in STREAMS.iterdir() if not path.name.startswith("_"))


def test_all_twenty_recordings_are_here() -> None:
    assert len(CASES) == 20, CASES


def check_requests(case: Case, requests: list[RecordedRequest]) -> None:
    """Every call answered in the next request (same id, matching output
    type); reasoning items back unchanged; no retry of what cannot succeed."""
    assert [r.refusal for r in requests] == [None] * len(requests), case.name
    assert len(requests) == len(case.responses), (case.name, len(requests))
    for index, response in enumerate(case.responses[:-1]):
        sent = requests[index + 1].body["input"]
        answered = {
            (item["type"], item.get("call_id") or item.get("id"))
            for item in sent
            if item["type"].endswith("_output")
        }
        for call in response.calls:
            assert (OUTPUT_OF[call["type"]], call["call_id"]) in answered, (case.name, call)
        for item in response.items:
            if item["type"] != "reasoning":
                continue
            expected = {key: value for key, value in item.items() if key != "id"}
            assert expected in sent, (case.name, "reasoning item not sent back unchanged")
        assert not any("id" in item for item in sent if item["type"] != "local_shell_call_output")


@pytest.mark.parametrize("name", CASES)
async def test_replay_through_the_server(
    name: str, client: AgentClient, fake: FakeModelThread
) -> None:
    case = Case.read(name)
    fake.on_request(case.reply)
    result = await client.call("agent/submit", {"prompt": "replay"})
    check_requests(case, fake.requests)
    turn = result["turnId"]
    shown = client.text(turn)
    everything = "".join(response.text for response in case.responses)
    if case.completes:
        assert result["status"] == "completed", result
        assert result["finalMessage"] == case.responses[-1].text
        assert result["finalMessage"], "every recording ends with an answer"
        # What the user read: every message of every response, in order.
        assert shown == everything
    else:
        assert result["status"] == "failed", result
        recorded = case.responses[-1].error
        assert recorded and recorded in result["error"], (recorded, result["error"])
    # Every call the model made shows as a tool call, and ends.
    for response in case.responses:
        for call in response.calls:
            started = client.of("tool.started")
            assert any(e["callId"] == call["call_id"] for e in started), call
            finished = client.of("tool.finished")
            assert any(e["callId"] == call["call_id"] for e in finished), call
    reasoning = "".join(response.reasoning for response in case.responses)
    assert client.text(turn, "reasoning.delta").replace("\n\n", "") == reasoning.replace("\n\n", "")


@pytest.mark.parametrize("name", CASES)
async def test_replay_in_exec(name: str, tmp_path: Path) -> None:
    """``agentls exec`` prints the recorded answer (one that came only in
    ``output_item.done`` included), or says why the turn failed."""
    case = Case.read(name)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    async with FakeModel(on_request=case.reply) as model:
        env["OPENAI_BASE_URL"] = model.base_url
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "agentls",
            "exec",
            "replay",
            env=env,
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), WAIT * 6)
        check_requests(case, list(model.requests))
    stdout, stderr = out.decode(), err.decode()
    if case.completes:
        assert process.returncode == 0, stderr
        # Every message in order (the terminal starts a new line before a tool call).
        everything = "".join(r.text for r in case.responses)
        assert stdout.replace("\n", "") == everything.replace("\n", "")
    else:
        assert process.returncode == 1, stderr
        assert case.responses[-1].error in stderr
