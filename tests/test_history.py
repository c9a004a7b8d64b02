from __future__ import annotations

from agentls.agent.history import History


def item(n: int) -> dict[str, object]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": str(n)}]}


def test_commit_and_order() -> None:
    history = History()
    history.commit([item(1), item(2)])
    history.commit([])
    history.commit([item(3)])
    assert [i["content"][0]["text"] for i in history.items()] == ["1", "2", "3"]
    assert len(history) == 3


def test_fork_shares_segments_and_diverges() -> None:
    parent = History()
    for n in range(1000):
        parent.commit([item(n)])
    fork = parent.fork()
    assert fork.items() == parent.items()
    # Shared physically: the same item objects, not copies.
    assert all(a is b for a, b in zip(fork.items(), parent.items(), strict=True))
    assert parent.shares_with(fork) == 1000
    fork.commit([item(-1)])
    parent.commit([item(-2)])
    assert len(fork) == len(parent) == 1001
    assert fork.items()[-1] != parent.items()[-1]
    assert parent.shares_with(fork) == 1000


def test_initial_items() -> None:
    history = History([item(1)])
    assert len(history) == 1
    assert len(History()) == 0


def test_a_listener_hears_commits_and_replacements_and_forks_start_without_one() -> None:
    heard: list[tuple[str, tuple[dict[str, str], ...]]] = []

    class Listener:
        def committed(self, items: tuple[dict[str, str], ...]) -> None:
            heard.append(("committed", items))

        def replaced(self, items: tuple[dict[str, str], ...]) -> None:
            heard.append(("replaced", items))

    history = History([{"n": "0"}])
    history.listener = Listener()
    history.commit([{"n": "1"}])
    history.commit([])
    fork = history.fork()
    history.replace([{"n": "summary"}])
    fork.commit([{"n": "fork"}])
    assert heard == [("committed", ({"n": "1"},)), ("replaced", ({"n": "summary"},))]
    assert history.items() == [{"n": "summary"}]
    assert fork.items() == [{"n": "0"}, {"n": "1"}, {"n": "fork"}]
