from __future__ import annotations

from agentls.testing.fake_model import FakeModelThread, Reply

from .lsp_support import AgentClient


async def test_submit_streams_and_answers(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.text("Hello from the fake"))
    result = await client.call("agent/submit", {"prompt": "hi"})
    assert result["status"] == "completed"
    assert result["finalMessage"] == "Hello from the fake"
    assert client.text(result["turnId"]) == "Hello from the fake"
    kinds = [e["kind"] for e in client.events]
    assert kinds[0] == "turn.started" and kinds[-1] == "turn.finished"
    assert [e["seq"] for e in client.events] == list(range(1, len(kinds) + 1))
