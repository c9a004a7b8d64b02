"""Bounded tool output: what the model is given of a long output is its head
and its tail, with the cut said, so no single tool call can flood the
conversation (every tool that returns output of unknown size uses this)."""

from __future__ import annotations


class OutputCapture:
    """Keeps the first ``head`` and the last ``tail`` bytes of a stream."""

    __slots__ = ("_head", "_head_limit", "_tail", "_tail_limit", "total")

    def __init__(self, head: int, tail: int) -> None:
        self._head = bytearray()
        self._tail = bytearray()
        self._head_limit = head
        self._tail_limit = tail
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            excess = len(self._tail) - self._tail_limit
            if excess > 0:
                del self._tail[:excess]

    def text(self) -> str:
        omitted = self.total - len(self._head) - len(self._tail)
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if omitted <= 0:
            return head + tail
        return f"{head}\n[… {omitted} bytes of output omitted …]\n{tail}"


def bounded(text: str, head: int, tail: int) -> str:
    """``text`` with at most ``head`` bytes from its start and ``tail`` from its end."""
    capture = OutputCapture(head, tail)
    capture.feed(text.encode("utf-8"))
    return capture.text()
