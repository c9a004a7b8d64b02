"""Waiting on the fake from any thread or event loop: a change signal, and gates."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Notifier:
    """A change signal that code on any event loop, or any thread, can wait on.

    State lives elsewhere; whoever changes it calls :meth:`notify`, and waiters
    re-check their predicate.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def notify(self) -> None:
        with self._cond:
            self._cond.notify_all()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(_wake, future)

    async def wait_for(
        self,
        predicate: Callable[[], bool],
        seconds: float | None,
        what: str,
    ) -> None:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(seconds):
                while True:
                    with self._cond:
                        if predicate():
                            return
                        future: asyncio.Future[None] = loop.create_future()
                        self._waiters.append((loop, future))
                    await future
        except TimeoutError:
            raise TimeoutError(f"timed out after {seconds}s waiting for {what}") from None

    def wait_for_blocking(
        self,
        predicate: Callable[[], bool],
        timeout: float | None,
        what: str,
    ) -> None:
        with self._cond:
            if not self._cond.wait_for(predicate, timeout):
                raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


class Gate:
    """A point where held streams wait until :meth:`release` is called.

    Create one with ``fake.gate()`` (or ``Gate()``), pass it as ``hold=`` to a
    reply. Thread-safe: ``release()`` may be called from any thread, and
    ``wait_reached()`` awaited on any event loop.
    """

    def __init__(self, name: str = "gate") -> None:
        self.name = name
        self._notifier = Notifier()
        self._released = False
        self._reached = 0

    def __repr__(self) -> str:
        return f"<Gate {self.name} reached={self._reached} released={self._released}>"

    def release(self) -> None:
        """Let every stream held here (now or later) continue."""
        self._released = True
        self._notifier.notify()

    @property
    def released(self) -> bool:
        return self._released

    @property
    def reached(self) -> bool:
        """Whether a stream has reached this gate (its events so far are written)."""
        return self._reached > 0

    @property
    def reached_count(self) -> int:
        """How many streams have reached this gate."""
        return self._reached

    async def wait_reached(self, timeout: float | None = 5.0, *, count: int = 1) -> None:
        """Return once ``count`` streams have reached the gate; TimeoutError otherwise."""
        await self._notifier.wait_for(
            lambda: self._reached >= count, timeout, f"{count} stream(s) to reach {self.name}"
        )

    def wait_reached_blocking(self, timeout: float | None = 5.0, *, count: int = 1) -> None:
        """:meth:`wait_reached` for synchronous code (e.g. with ``run_in_thread``)."""
        self._notifier.wait_for_blocking(
            lambda: self._reached >= count, timeout, f"{count} stream(s) to reach {self.name}"
        )

    def mark_reached(self) -> None:
        """Called by the server when a stream gets here."""
        self._reached += 1
        self._notifier.notify()

    async def wait_released(self) -> None:
        await self._notifier.wait_for(lambda: self._released, None, f"{self.name} release")
