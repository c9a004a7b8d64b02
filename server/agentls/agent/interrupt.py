"""A re-armable, per-turn interrupt handle (the twin of nanocodex's interrupt.rs).

Whoever holds the handle can ask the agent to abandon its *current* turn
without tearing the session down. A token is one-shot, so the runner swaps in a
fresh one for each turn: the next turn starts armed again. Tokens are
thread-safe: a UI thread may interrupt a turn running on another event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable


class CancelToken:
    """A one-shot cancellation flag that wakes callbacks on their own event loops."""

    __slots__ = ("_callbacks", "_cancelled", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._callbacks: list[tuple[asyncio.AbstractEventLoop, Callable[[], object]]] = []

    def cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            callbacks, self._callbacks = self._callbacks, []
        for loop, callback in callbacks:
            loop.call_soon_threadsafe(callback)

    def is_cancelled(self) -> bool:
        return self._cancelled

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` on the current loop when cancelled (now, if already).
        Returns a function that unregisters it."""
        loop = asyncio.get_running_loop()
        entry = (loop, callback)
        with self._lock:
            if not self._cancelled:
                self._callbacks.append(entry)

                def remove() -> None:
                    with self._lock:
                        if entry in self._callbacks:
                            self._callbacks.remove(entry)

                return remove
        loop.call_soon(callback)
        return lambda: None

    async def cancelled(self) -> None:
        """Wait until the token is cancelled."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        remove = self.on_cancel(wake)
        try:
            await future
        finally:
            remove()


class InterruptHandle:
    """A shareable handle to interrupt whatever turn is in flight."""

    __slots__ = ("_lock", "_token")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._token = CancelToken()

    def interrupt(self) -> None:
        """Abandon the current turn. Idempotent until the runner rearms."""
        with self._lock:
            token = self._token
        token.cancel()

    def is_interrupted(self) -> bool:
        with self._lock:
            return self._token.is_cancelled()

    def token(self) -> CancelToken:
        """The current turn's token, to race work against."""
        with self._lock:
            return self._token

    def rearm(self) -> CancelToken:
        """Swap in a fresh token for the next turn; the old one stays cancelled."""
        with self._lock:
            self._token = CancelToken()
            return self._token
