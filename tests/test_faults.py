"""Model-side faults through the whole server: each ends the turn with the
right status and a readable error, the conversation stays valid for the next
turn, and the server keeps serving."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp

from agentls.testing.fake_model import FakeModelThread, Reply

from .lsp_support import AgentClient, initialize, server_config

FAST_RETRIES = {"AGENTLS_RETRY_BASE_DELAY": "0.01"}


@pytest_lsp.fixture(config=server_config(FAST_RETRIES))
async def faulty(
    lsp_client: AgentClient, fake: FakeModelThread, workspace: Path
) -> AsyncIterator[None]:
    await initialize(lsp_client, workspace, fake.base_url, idleTimeout=0.5)
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


# (name, replies, expected status, text the error or the retries must mention)
FAULTS: list[tuple[str, Callable[[], list[Reply]], str, str]] = [
    (
        "429 then success",
        lambda: [Reply.http_error(429, retry_after=0.2), Reply.text("ok")],
        "completed",
        "429",
    ),
    (
        "500, 502, 503 then success",
        lambda: [
            Reply.http_error(500),
            Reply.http_error(502),
            Reply.http_error(503),
            Reply.text("ok"),
        ],
        "completed",
        "503",
    ),
    (
        "stream cut after deltas",
        lambda: [Reply.cut(after=6), Reply.text("ok")],
        "completed",
        "broke",
    ),
    ("stalled stream", lambda: [Reply.stall(after=3)] * 5, "failed", "idle timeout"),
    ("malformed SSE", lambda: [Reply.malformed(after=3)] * 5, "failed", "malformed"),
    (
        "error event",
        lambda: [Reply.error_event("engine on fire", code="server_error")] * 5,
        "failed",
        "engine on fire",
    ),
    (
        "auth error",
        lambda: [Reply.http_error(401, message="bad key")],
        "failed",
        "Check OPENAI_API_KEY",
    ),
]


@pytest.mark.parametrize(("name", "replies", "status", "words"), FAULTS, ids=[f[0] for f in FAULTS])
async def test_fault(
    faulty: AgentClient,
    fake: FakeModelThread,
    name: str,
    replies: Callable[[], list[Reply]],
    status: str,
    words: str,
) -> None:
    fake.script(*replies())
    started = time.monotonic()
    result = await faulty.call("agent/submit", {"prompt": "first"}, timeout=30)
    assert result["status"] == status, result
    said = result.get("error", "") + " ".join(e["reason"] for e in faulty.of("model.retry"))
    assert words in said, said
    if name == "429 then success":
        retry = faulty.of("model.retry")[0]
        assert retry["delayMs"] == 200 and retry["failure"] == "rate_limit"
        # When it goes again, for a line that counts down: 200 ms after it was said.
        assert abs(retry["retryAt"] / 1000 - (time.time() + 0.2)) < 5
        assert time.monotonic() - started >= 0.2, "retry-after was honoured"
        # The user also reads it in the editor's log (window/logMessage).
        assert any("retrying in 0.2 s" in m.message for m in faulty.log_messages)
    # What failed, typed, in the result and in turn.finished: an editor names
    # the setting to fix from it (never from the error's words).
    [finished] = faulty.of("turn.finished")
    assert result.get("failure") == finished.get("failure")
    assert ("failure" in result) == (status == "failed"), result
    if name == "auth error":
        assert result["failure"] == "auth"
        assert len(fake.requests) == 1, "an auth error is not retried"
    # The conversation is still valid: the next turn carries a consistent history.
    fake.script(Reply.text("second answer"))
    second = await faulty.call("agent/submit", {"prompt": "second"})
    assert second["status"] == "completed" and second["finalMessage"] == "second answer"
    items = fake.requests[-1].body["input"]
    texts = [p["text"] for i in items if i.get("role") == "user" for p in i["content"]]
    assert texts == ["first", "second"]
    assert "bad key" not in json.dumps(items)


async def test_connection_refused(faulty: AgentClient, workspace: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Point the session at a port nobody listens on (settings change, no restart).
    faulty.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(
            settings={"agentls": {"baseUrl": f"http://127.0.0.1:{port}/v1"}}
        )
    )
    result = await faulty.call("agent/submit", {"prompt": "hello"}, timeout=30)
    assert result["status"] == "failed"
    assert "cannot reach the model" in result["error"] and str(port) in result["error"]
    assert result["failure"] == "connection"


@pytest_lsp.fixture(config=server_config({"OPENAI_API_KEY": ""}))
async def keyless(lsp_client: AgentClient) -> AsyncIterator[None]:
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


async def test_no_credentials_are_told_at_initialize(keyless: AgentClient, workspace: Path) -> None:
    """No key and no base URL: initialize says so, and what to set (an editor
    warns at start-up, not at the first prompt)."""
    result = await initialize(keyless, workspace, None)
    experimental = result.capabilities.experimental
    assert experimental is not None
    assert "OPENAI_API_KEY" in experimental["agentls"]["missingCredentials"]
