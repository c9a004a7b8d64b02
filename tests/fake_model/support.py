"""Helpers shared by the fake model's tests."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Iterable
from typing import Any, cast

import httpx2
import openai
from openai.types.responses import Response, ResponseInputParam

from agentls.testing.fake_model import FakeModel

TIMEOUT = 10.0  # upper bound for every wait in these tests


def sdk(fake: FakeModel) -> openai.AsyncOpenAI:
    """The real SDK pointed at ``fake``, without retries, validating every event
    strictly against its pydantic models."""
    return openai.AsyncOpenAI(
        api_key="test",
        base_url=fake.base_url,
        max_retries=0,
        timeout=httpx2.Timeout(TIMEOUT),
        _strict_response_validation=True,
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


async def create(
    client: openai.AsyncOpenAI, items: Iterable[dict[str, Any]], **options: Any
) -> Response:
    """A request without ``stream`` (the answer is one JSON object)."""
    input_items = cast(ResponseInputParam, list(items))
    async with asyncio.timeout(TIMEOUT):
        response: Response = await client.responses.create(
            model="gpt-test", input=input_items, **options
        )
    return response


async def final_event(client: openai.AsyncOpenAI, items: Iterable[dict[str, Any]]) -> Any:
    """The last event of a streamed request."""
    input_items = cast(ResponseInputParam, list(items))
    async with asyncio.timeout(TIMEOUT):
        stream = await client.responses.create(model="gpt-test", input=input_items, stream=True)
        events = [event async for event in stream]
    return events[-1]


@contextlib.asynccontextmanager
async def serving_cli(*args: str) -> AsyncIterator[str]:
    """``python -m agentls.testing.fake_model --port 0 ARGS...`` for the block;
    yields the base URL it prints, and checks it exits 0 on SIGTERM."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls.testing.fake_model",
        "--port",
        "0",
        *args,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(TIMEOUT):
            line = (await proc.stdout.readline()).decode().strip()
        assert line.startswith("listening http://127.0.0.1:"), line
        yield line.removeprefix("listening ")
    finally:
        if proc.returncode is None:
            proc.terminate()
        try:
            async with asyncio.timeout(TIMEOUT):
                await proc.wait()
        except TimeoutError:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0
