"""The conversation: an append-only list of Responses items built from shared,
immutable segments.

Each commit (a prompt, a model response with its tool outputs, a steer) adds
one frozen segment that points at the segment before it. A fork copies one
pointer, so forking costs the same for ten items or a hundred thousand, and
parent and fork share every item committed before the fork.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from agentls.model.types import Item


class HistoryListener(Protocol):
    """Told of every change to one history, in order (the session store keeps
    a conversation on disk this way)."""

    def committed(self, items: tuple[Item, ...]) -> None:
        """A step was appended."""

    def replaced(self, items: tuple[Item, ...]) -> None:
        """The whole conversation was replaced (a compaction)."""


class _Segment:
    __slots__ = ("items", "length", "parent")

    def __init__(self, items: tuple[Item, ...], parent: _Segment | None) -> None:
        self.items = items
        self.parent = parent
        self.length: int = len(items) + (parent.length if parent else 0)


class History:
    """A conversation. Only whole, consistent steps are ever committed."""

    __slots__ = ("_cache", "_head", "listener")

    def __init__(self, items: Iterable[Item] = ()) -> None:
        initial = tuple(items)
        self._head: _Segment | None = _Segment(initial, None) if initial else None
        self._cache: list[Item] | None = None
        self.listener: HistoryListener | None = None

    def __len__(self) -> int:
        return self._head.length if self._head else 0

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items())

    def commit(self, items: Iterable[Item]) -> None:
        """Append a step. The items must not be mutated afterwards (they are shared)."""
        segment = tuple(items)
        if segment:
            self._head = _Segment(segment, self._head)
            self._cache = None
            if self.listener is not None:
                self.listener.committed(segment)

    def replace(self, items: Iterable[Item]) -> None:
        """Start over from ``items`` (a compaction). Forks keep what they shared."""
        whole = tuple(items)
        self._head = _Segment(whole, None) if whole else None
        self._cache = None
        if self.listener is not None:
            self.listener.replaced(whole)

    def fork(self) -> History:
        """A history that shares every committed item with this one (and has
        no listener of its own yet)."""
        other = History.__new__(History)
        other._head = self._head
        other._cache = self._cache
        other.listener = None
        return other

    def items(self) -> list[Item]:
        """All items in order (cached until the next commit; do not mutate)."""
        if self._cache is None:
            segments: list[tuple[Item, ...]] = []
            node = self._head
            while node is not None:
                segments.append(node.items)
                node = node.parent
            flat: list[Item] = []
            for segment in reversed(segments):
                flat.extend(segment)
            self._cache = flat
        return self._cache

    def shares_with(self, other: History) -> int:
        """How many leading items two histories share physically (for tests and benchmarks)."""
        mine: set[int] = set()
        node = self._head
        while node is not None:
            mine.add(id(node))
            node = node.parent
        node = other._head
        while node is not None and id(node) not in mine:
            node = node.parent
        return node.length if node else 0
