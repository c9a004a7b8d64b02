from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import pytest

from agentls.testing.fake_model import FakeModel

from .support import sdk


@pytest.fixture
async def fake() -> AsyncIterator[FakeModel]:
    """A fake model on the test's own loop (this overrides the threaded one)."""
    async with FakeModel() as model:
        yield model
        assert model.errors == []


@pytest.fixture
async def client(fake: FakeModel) -> AsyncIterator[openai.AsyncOpenAI]:
    async with sdk(fake) as client:
        yield client
