"""A fake model on its own event loop in a background thread, for synchronous code."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Self, Unpack

from .recorder import RecordedRequest
from .script import Reply
from .server import FakeModel, FakeModelOptions, ReplyHandler
from .waiting import Gate


class FakeModelThread:
    """A :class:`FakeModel` running on its own event loop in a background thread.

    Everything here is safe to call from any thread. ``on_request`` handlers
    run on the fake's loop.
    """

    def __init__(self, model: FakeModel, loop: asyncio.AbstractEventLoop) -> None:
        self.model = model
        self.loop = loop

    @property
    def base_url(self) -> str:
        return self.model.base_url

    @property
    def url(self) -> str:
        return self.model.url

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests received so far."""
        return list(self.model.requests)

    @property
    def pending(self) -> int:
        return self.model.pending

    def script(self, *replies: Reply) -> Self:
        self.model.script(*replies)
        return self

    def on_request(self, handler: ReplyHandler | None) -> ReplyHandler | None:
        return self.model.on_request(handler)

    def gate(self, name: str | None = None) -> Gate:
        return self.model.gate(name)

    def wait_for_requests(self, n: int, timeout: float | None = 5.0) -> list[RecordedRequest]:
        """Block until ``n`` requests have arrived (TimeoutError otherwise)."""
        return self.model.wait_for_requests_blocking(n, timeout)

    async def wait_for_requests_async(
        self,
        n: int,
        timeout: float | None = 5.0,
    ) -> list[RecordedRequest]:
        """:meth:`wait_for_requests` for code running on another event loop."""
        return await self.model.wait_for_requests(n, timeout)


@contextlib.contextmanager
def run_in_thread(
    *replies: Reply,
    startup_timeout: float = 10.0,
    **options: Unpack[FakeModelOptions],
) -> Iterator[FakeModelThread]:
    """Run a fake model in a background thread for the ``with`` block.

    ``options`` are :class:`FakeModel`'s (``host``, ``port``, ``on_request``,
    ``strict``, ``context_window``, ``reject_stored_item_ids``). ::

        with run_in_thread(Reply.text("hi")) as fake:
            client = openai.OpenAI(api_key="test", base_url=fake.base_url)
            ...
    """
    model = FakeModel(*replies, **options)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            try:
                loop.run_until_complete(model.start())
            except BaseException as exc:
                failure.append(exc)
                return
            finally:
                ready.set()
            loop.run_forever()
            loop.run_until_complete(model.stop())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="fake-model", daemon=True)
    thread.start()
    if not ready.wait(startup_timeout):
        raise TimeoutError("the fake model thread did not start")
    if failure:
        thread.join()
        raise failure[0]
    try:
        yield FakeModelThread(model, loop)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(startup_timeout)


# --------------------------------------------------------------------- command line
