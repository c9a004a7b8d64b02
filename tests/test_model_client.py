"""The model client: retries, failures, and the words the user gets."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from agentls.agent.errors import TurnFailed
from agentls.config import ModelConfig
from agentls.model.client import ResponsesClient
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, running_agent


async def test_429_retry_after_is_honoured_then_success(tmp_path: Path) -> None:
    async with (
        FakeModel() as fake,
        running_agent(fake.base_url, tmp_path, retry_max_delay=5.0) as (agent, log),
    ):
        fake.script(Reply.http_error(429, retry_after=0.3), Reply.text("finally"))
        started = time.monotonic()
        with anyio.fail_after(WAIT):
            outcome = await agent.prompt("go")
        assert outcome.final_message == "finally"
        retry = log.of("model.retry")[0]
        assert retry.delay == pytest.approx(0.3)
        assert "429" in retry.reason
        assert time.monotonic() - started >= 0.3
        assert len(fake.requests) == 2


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_are_retried(tmp_path: Path, status: int) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(Reply.http_error(status), Reply.http_error(status), Reply.text("ok"))
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("go")).final_message == "ok"
        assert [e.attempt for e in log.of("model.retry")] == [1, 2]


async def test_cut_stream_is_discarded_and_retried(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(Reply.cut(after=8), Reply.text("complete answer"))
        with anyio.fail_after(WAIT):
            outcome = await agent.prompt("go")
        assert outcome.final_message == "complete answer"
        assert log.of("model.retry"), "the user is told the partial text is void"
        assistant = [i for i in agent.history.items() if i.get("role") == "assistant"]
        assert len(assistant) == 1, "nothing of the cut response was committed"


async def test_retries_exhausted_fail_the_turn(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(*[Reply.http_error(503, message="overloaded") for _ in range(5)])
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed, match="gave up after 5 attempts"):
            await agent.prompt("go")
        assert len(fake.requests) == 5
        finished = await log.wait_kind("turn.finished")
        assert finished.status == "failed" and "503" in finished.error


async def test_invalid_request_is_not_retried(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        fake.script(Reply.http_error(400, message="unknown parameter"))
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed, match="refused the request"):
            await agent.prompt("go")
        assert len(fake.requests) == 1


async def test_stalled_stream_times_out_cleanly(tmp_path: Path) -> None:
    async with (
        FakeModel() as fake,
        running_agent(fake.base_url, tmp_path, idle_timeout=0.2, max_attempts=2) as (agent, _),
    ):
        fake.script(Reply.stall(after=3), Reply.stall(after=3))
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed, match="idle timeout"):
            await agent.prompt("go")


@pytest.mark.parametrize("reply", ["malformed", "error_event", "failed"])
async def test_broken_streams_end_in_a_readable_failure(tmp_path: Path, reply: str) -> None:
    async with (
        FakeModel() as fake,
        running_agent(fake.base_url, tmp_path, max_attempts=2) as (agent, _),
    ):
        make: Callable[[], Reply] = {
            "malformed": lambda: Reply.malformed(after=3),
            "error_event": lambda: Reply.error_event("the engine exploded", code="server_error"),
            "failed": lambda: Reply.failed("the engine exploded", code="server_error"),
        }[reply]
        fake.script(make(), make(), Reply.text("unused"))
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed) as caught:
            await agent.prompt("go")
        message = str(caught.value)
        assert "malformed" in message or "exploded" in message
        # The conversation stays valid for the next turn.
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("again")).final_message == "unused"


def _error_stream(error: dict[str, str]) -> bytes:
    """A stream that is created, then reports ``error`` in an ``error`` event."""
    created = {"type": "response.created", "sequence_number": 0, "response": {"id": "r"}}
    event = {"type": "error", "sequence_number": 1, "error": error}
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in (created, event)
    )


async def test_an_in_stream_error_is_told_by_its_code_and_type_never_its_words(
    tmp_path: Path,
) -> None:
    typed = {"type": "rate_limit_error", "code": "brand_new_code", "message": "Slow down."}
    worded = {"code": "brand_new_code", "message": "Rate limit reached, says the text."}
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(
            Reply.raw_sse(_error_stream(typed)),
            Reply.raw_sse(_error_stream(worded)),
            Reply.text("ok"),
        )
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("go")).final_message == "ok"
    assert [retry.failure for retry in log.of("model.retry")] == ["rate_limit", "server"]


async def test_connection_refused_is_reported(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with running_agent(f"http://127.0.0.1:{port}/v1", tmp_path, max_attempts=2) as (agent, _):
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed, match="cannot reach the model"):
            await agent.prompt("go")


async def test_auth_error_never_shows_the_key(tmp_path: Path) -> None:
    key = "sk-test-key-do-not-leak-0123456789"
    async with (
        FakeModel() as fake,
        running_agent(fake.base_url, tmp_path, api_key=key) as (agent, _),
    ):
        fake.script(
            Reply.http_error(401, message=f"Incorrect API key provided: {key[:6]}****6789.")
        )
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed) as caught:
            await agent.prompt("go")
        assert "6789" not in str(caught.value) and key not in str(caught.value)
        assert "Check OPENAI_API_KEY" in str(caught.value)
        assert fake.requests[0].headers["authorization"] == f"Bearer {key}"


async def test_missing_credentials_say_what_to_set(tmp_path: Path) -> None:
    client = ResponsesClient(ModelConfig(base_url=None, api_key=None))
    async with running_agent(None, tmp_path, client=client) as (agent, _):
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed, match="set OPENAI_API_KEY"):
            await agent.prompt("go")


def test_redaction_is_linear_and_exact() -> None:
    from agentls.redaction import redact

    key = "sk-proj-1234567890abcd"
    assert redact(f"bad key {key}!", key) == "bad key [redacted]!"
    assert redact("provided: sk-pro****abcd.", key) == "provided: [redacted]."
    assert redact("abcdz abcd_ stays", key) == "abcdz abcd_ stays"
    # A quadratic pattern takes minutes on these (the suite's timeout fails
    # it); a linear pass takes milliseconds.
    assert redact("x" * 1_000_000 + " abcd", key).endswith(" [redacted]")
    assert redact("y" * 1_000_000, key) == "y" * 1_000_000
