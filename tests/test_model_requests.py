"""Requests every account accepts: parameters a server refuses are dropped and
remembered, errors that no retry can fix are not retried, the prompt cache key,
items without ids, efforts that follow the model."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from agentls.agent.errors import TurnFailed
from agentls.agent.settings import Settings
from agentls.config import ModelConfig
from agentls.model.models import UNKNOWN, model_info, nearest_effort
from agentls.protocol.methods import capabilities
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, running_agent

VERIFY = (
    "Your organization must be verified to generate reasoning summaries. Please go to: "
    "https://platform.openai.com/settings/organization/general and click on Verify Organization."
)


async def test_an_unverified_organisation_loses_the_summary_once_and_for_all(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    refusal = Reply.http_error(
        400, message=VERIFY, code="unsupported_value", param="reasoning.summary"
    )
    caplog.set_level(logging.WARNING, "agentls")
    async with (
        FakeModel(refusal, Reply.text("one"), Reply.text("two")) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("first")).final_message == "one"
            assert (await agent.prompt("second")).final_message == "two"
    first, retried, later = (r.body for r in fake.requests)
    assert first["reasoning"] == {"summary": "auto", "effort": "medium"}
    # Sent again at once without the parameter, and never again this session.
    assert (
        retried["reasoning"] == {"effort": "medium"} and later["reasoning"] == retried["reasoning"]
    )
    assert retried["include"] == ["reasoning.encrypted_content"]
    warnings = [r.getMessage() for r in caplog.records if "reasoning.summary" in r.getMessage()]
    assert len(warnings) == 1 and "Verify Organization" in warnings[0]


async def test_a_server_without_reasoning_gets_neither_reasoning_nor_include(
    tmp_path: Path,
) -> None:
    replies = [
        Reply.http_error(
            400, message="Unknown parameter: 'include'.", code="unknown_parameter", param="include"
        ),
        Reply.http_error(
            400,
            message="Unsupported parameter: 'reasoning.effort' is not supported with this model.",
            code="unsupported_parameter",
            param="reasoning.effort",
        ),
        Reply.text("plain"),
    ]
    async with (
        FakeModel(*replies) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("hi")).final_message == "plain"
    last = fake.requests[-1].body
    assert "include" not in last and last["reasoning"] == {"summary": "auto"}
    assert len(fake.requests) == 3


async def test_a_parameter_we_cannot_do_without_fails_the_turn_at_once(tmp_path: Path) -> None:
    bad = Reply.http_error(400, message="Invalid 'input[0]'.", code="invalid_value", param="input")
    async with FakeModel(bad) as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed, match="Invalid 'input"):
            await agent.prompt("hi")
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    ("status", "code", "message", "says"),
    [
        (429, "insufficient_quota", "You exceeded your current quota.", "add credit"),
        (429, "billing_hard_limit_reached", "Billing hard limit has been reached.", "add credit"),
        (
            429,
            "rate_limit_exceeded",
            "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 35364.",
            "waiting cannot help",
        ),
    ],
)
async def test_errors_no_wait_can_fix_are_not_retried(
    tmp_path: Path, status: int, code: str, message: str, says: str
) -> None:
    async with (
        FakeModel(Reply.http_error(status, message=message, code=code)) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed) as caught:
            await agent.prompt("hi")
    assert len(fake.requests) == 1 and not log.of("model.retry")
    assert message in str(caught.value) and says in str(caught.value)


async def test_quota_in_a_stream_is_not_retried_either(tmp_path: Path) -> None:
    failed = Reply.failed("You exceeded your current quota.", code="insufficient_quota")
    async with FakeModel(failed) as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed, match="add credit"):
            await agent.prompt("hi")
    assert len(fake.requests) == 1


async def test_a_passing_rate_limit_is_still_retried(tmp_path: Path) -> None:
    limit = Reply.http_error(
        429, message="Rate limit reached: Limit 30000, Requested 2000.", retry_after=0.01
    )
    async with (
        FakeModel(limit, Reply.text("ok")) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("hi")).final_message == "ok"
    assert len(log.of("model.retry")) == 1


async def test_requests_carry_the_session_cache_key_and_no_item_ids(tmp_path: Path) -> None:
    async with FakeModel(
        Reply.reasoning("hm") + Reply.tool_call("read_file", {"path": "a.txt"}),
        Reply.text("read it"),
        Reply.text("fresh"),
    ) as fake:
        (tmp_path / "a.txt").write_text("a\n")
        async with running_agent(fake.base_url, tmp_path) as (agent, _):
            with anyio.fail_after(WAIT):
                await agent.prompt("read")
            fresh = agent.spawn()
            with anyio.fail_after(WAIT):
                await fresh.prompt("new session")
                await fresh.shutdown()
    keys = [r.body["prompt_cache_key"] for r in fake.requests]
    assert keys[0] == keys[1] == agent.session_id and keys[2] == fresh.session_id != keys[0]
    second = fake.requests[1].body["input"]
    assert [item["type"] for item in second] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert not any("id" in item for item in second)  # the strict fake would 404 otherwise


async def test_a_model_that_does_not_reason_gets_no_reasoning(tmp_path: Path) -> None:
    async with (
        FakeModel(Reply.text("ok")) as fake,
        running_agent(fake.base_url, tmp_path, model="gpt-4o-2024-08-06") as (a, _),
    ):
        with anyio.fail_after(WAIT):
            await a.prompt("hi")
    body = fake.requests[0].body
    assert "reasoning" not in body and "include" not in body


async def test_the_effort_sent_is_one_the_model_takes(tmp_path: Path) -> None:
    settings = Settings(effort="minimal")
    async with (
        FakeModel(Reply.text("ok")) as fake,
        running_agent(fake.base_url, tmp_path, model="gpt-5.1", settings=settings) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("hi")
    assert fake.requests[0].body["reasoning"]["effort"] == "low"


def test_known_models_and_the_defaults_for_others() -> None:
    assert model_info("gpt-5.1-codex-max").efforts == ("low", "medium", "high", "xhigh")
    assert model_info("gpt-5.1-codex").efforts == ("low", "medium", "high")
    assert model_info("openai/gpt-5-mini-2025-08-07").context_window == 272_000
    assert model_info("gpt-4o-mini").reasoning is False
    assert model_info("my-local-model") is UNKNOWN and UNKNOWN.context_window == 128_000
    assert nearest_effort("xhigh", ("low", "medium", "high")) == "high"
    assert nearest_effort("none", ("minimal", "low")) == "minimal"
    assert nearest_effort("high", ()) is None
    caps = capabilities("gpt-5.1", None)
    assert caps["efforts"] == ["none", "low", "medium", "high"]
    assert caps["contextWindow"] == 272_000 and caps["model"] == "gpt-5.1"
    assert capabilities("my-local-model", 32_768)["contextWindow"] == 32_768
    assert capabilities("my-local-model", None)["efforts"] == [
        "none",
        "minimal",
        "low",
        "medium",
        "high",
        "xhigh",
    ]


def test_the_stream_idle_timeout_is_five_minutes() -> None:
    assert ModelConfig().idle_timeout == 300.0
