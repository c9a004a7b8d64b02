"""The fake Responses server of a benchmark run, on the driver's own event loop.

Every contestant (agentls, Codex, the SDK baselines) talks to one
:class:`~agentls.testing.fake_model.FakeModel`. A request is answered by
the tag in its last user message, ``[bench:KIND:N]``: the figure registers a
reply factory for ``KIND`` and later finds the request of repetition ``N`` by
its tag, with the fake's own timestamps (``t_arrival_ns``,
``t_first_delta_ns``: ``time.perf_counter_ns()``, CLOCK_MONOTONIC, so they
compare with the driver's and with other processes' clocks on this machine).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from agentls.testing.fake_model import RESPONSES_PATHS, FakeModel, RecordedRequest, Reply

_TAG = re.compile(r"\[bench:([a-z0-9_-]+):(\d+)\]")

ReplyFactory = Callable[[int], Reply]


def tag(kind: str, n: int) -> str:
    return f"[bench:{kind}:{n}]"


def _texts(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(part.get("text", "")) for part in content if isinstance(part, dict)]
    return []


def last_user_tag(body: dict[str, Any]) -> tuple[str, int] | None:
    """The tag of the request's last user message, or None."""
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        return None
    if isinstance(items[-1], dict) and items[-1].get("type") == "function_call_output":
        return None  # a follow-up after a tool call: not a new prompt
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            for text in _texts(item):
                found = _TAG.search(text)
                if found:
                    return found.group(1), int(found.group(2))
            return None
    return None


class FakeHub:
    def __init__(self) -> None:
        # Not strict: the benchmark measures speed, and peers send what the real
        # API takes but the fake refuses (Codex: `client_metadata`, item ids it
        # made itself). agentls's requests are checked strictly by the tests.
        self.model = FakeModel(on_request=self._route, strict=False, reject_stored_item_ids=False)
        self._factories: dict[str, ReplyFactory] = {}
        self._by_tag: dict[tuple[str, int], RecordedRequest] = {}
        self._arrived: dict[tuple[str, int], asyncio.Event] = {}
        self.untagged = 0

    async def __aenter__(self) -> FakeHub:
        await self.model.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.model.stop()

    @property
    def base_url(self) -> str:
        return self.model.base_url

    def on(self, kind: str, factory: ReplyFactory) -> None:
        """Answer requests tagged ``[bench:kind:N]`` with ``factory(N)``."""
        self._factories[kind] = factory

    def _event(self, key: tuple[str, int]) -> asyncio.Event:
        event = self._arrived.get(key)
        if event is None:
            event = self._arrived[key] = asyncio.Event()
        return event

    def _route(self, request: RecordedRequest) -> Reply:
        found = last_user_tag(request.body)
        if found is None or found[0] not in self._factories:
            self.untagged += 1
            return Reply.text("ok")
        self._by_tag[found] = request
        self._event(found).set()
        return self._factories[found[0]](found[1])

    async def request(self, kind: str, n: int, timeout: float = 30.0) -> RecordedRequest:
        """The request of repetition ``n`` of ``kind``, once it has arrived."""
        key = (kind, n)
        async with asyncio.timeout(timeout):
            await self._event(key).wait()
        return self._by_tag[key]

    def seen(self, kind: str, n: int) -> RecordedRequest | None:
        return self._by_tag.get((kind, n))

    def count(self, kind: str) -> int:
        return sum(1 for key in self._by_tag if key[0] == kind)

    def requests_since(self, index: int) -> list[RecordedRequest]:
        return self.model.requests[index:]

    @property
    def request_count(self) -> int:
        return len(self.model.requests)

    @staticmethod
    def foreign(requests: list[RecordedRequest]) -> list[str]:
        """Requests that are not ``POST`` to the Responses endpoint, as ``METHOD path``."""
        return [
            f"{r.method} {r.path}"
            for r in requests
            if r.method != "POST" or r.path not in RESPONSES_PATHS
        ]
