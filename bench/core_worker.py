"""In-process figures on agentls's agent core: fork cost and history memory.

Run by the driver as a fresh subprocess (``python bench/core_worker.py ...``)
so that its RSS is not the driver's; prints one JSON object. Conversations are
built the way turns build them — one commit per step, a mix of user messages,
assistant answers and tool calls with their outputs — and ``items()`` has been
called once, as after a model request.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio

from agentls.agent.agent import Agent
from agentls.agent.history import History
from agentls.agent.items import user_message
from agentls.config import AgentConfig, ModelConfig
from agentls.model.client import ResponsesClient

_WORDS = [
    *("the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"),
    *("while", "the", "build", "keeps", "running"),
]


def _text(i: int, words: int) -> str:
    return " ".join(_WORDS[(i + k) % len(_WORDS)] for k in range(words)) + f" #{i}"


def steps(n_items: int, start: int = 0) -> list[list[dict[str, Any]]]:
    """Commits adding up to ``n_items`` items: each turn is a prompt, a tool call
    with its output, and an answer (4 items, ~1.4 kB of text)."""
    out: list[list[dict[str, Any]]] = []
    i = start
    made = 0
    while made < n_items:
        call_id = f"call_{i}"
        turn = [
            [user_message(_text(i, 30))],
            [
                {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": f"rg -n pattern_{i} src"}),
                },
                {"type": "function_call_output", "call_id": call_id, "output": _text(i, 150)},
            ],
            [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": _text(i, 60)}],
                }
            ],
        ]
        for step in turn:
            step = step[: n_items - made]
            if step:
                out.append(step)
                made += len(step)
        i += 1
    return out


def build(n_items: int) -> History:
    history = History()
    for step in steps(n_items):
        history.commit(step)
    history.items()
    return history


def serialise(sizes: list[int], reps: int) -> dict[str, list[float]]:
    """What sending a request of N items costs at least: the body built
    (``build_body``) and serialised to JSON, as the SDK sends it. The items
    are shaped like those of the benchmark's long conversation (one answer
    of N short messages)."""
    from agentls.model.client import build_body
    from agentls.model.types import ModelRequest
    from agentls.tools.registry import ToolBox

    tools = ToolBox.default().specs
    out: dict[str, list[float]] = {}
    for n in sizes:
        items: list[dict[str, Any]] = [user_message("long answer")]
        for k in range(n):
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": f"item {k}"}
            items.append(
                {"type": "message", "status": "completed", "content": [part], "role": "assistant"}
            )
        request = ModelRequest(
            input=items, tools=tools, instructions="x" * 4000, effort="medium", fast_mode=False
        )
        times = []
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            json.dumps(build_body(request, "bench")).encode()
            times.append((time.perf_counter_ns() - t0) / 1e6)
        out[str(n)] = times
    return out


def rss() -> int:
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def fork_cost(
    agent_factory: Any, sizes: list[int], reps: int
) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {}
    for n in sizes:
        history = build(n)
        agent: Agent = agent_factory(history)
        agent_ms: list[float] = []
        history_ms: list[float] = []
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            fork = agent.fork()
            agent_ms.append((time.perf_counter_ns() - t0) / 1e6)
            assert len(fork.history) == n
            await fork.shutdown()
            t0 = time.perf_counter_ns()
            history.fork()
            history_ms.append((time.perf_counter_ns() - t0) / 1e6)
        await agent.shutdown()
        out[str(n)] = {"agent_fork_ms": agent_ms, "history_fork_ms": history_ms}
        del agent, history
        gc.collect()
    return out


async def memory(agent_factory: Any, n_items: int) -> dict[str, Any]:
    gc.collect()
    tracemalloc.start()
    base_traced = tracemalloc.get_traced_memory()[0]
    base_rss = rss()
    main: Agent = agent_factory(History())
    for step in steps(n_items):
        main.history.commit(step)
    main.history.items()
    gc.collect()
    main_traced = tracemalloc.get_traced_memory()[0]
    main_rss = rss()
    fork = main.fork()
    gc.collect()
    fork_traced = tracemalloc.get_traced_memory()[0]
    fork_rss = rss()
    # Then each pane takes one more turn of its own (and rebuilds its flat item list).
    extra = steps(4, start=10**7)
    for agent in (main, fork):
        for step in extra:
            agent.history.commit(list(step))
        agent.history.items()
    gc.collect()
    after_traced = tracemalloc.get_traced_memory()[0]
    after_rss = rss()
    tracemalloc.stop()
    result = {
        "items": n_items,
        "main_history_bytes": main_traced - base_traced,
        "fork_adds_bytes": fork_traced - main_traced,
        "after_one_turn_each_bytes": after_traced - fork_traced,
        "rss_before_bytes": base_rss,
        "rss_main_bytes": main_rss,
        "rss_main_and_fork_bytes": fork_rss,
        "rss_after_one_turn_each_bytes": after_rss,
        "shared_items": main.history.shares_with(fork.history),
    }
    await fork.shutdown()
    await main.shutdown()
    return result


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--memory-items", type=int, default=10000)
    parser.add_argument("--serialise-sizes", default="1000,10000")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="bench-core-") as root:
        client = ResponsesClient(ModelConfig(model="bench", base_url="http://127.0.0.1:9/v1"))
        config = AgentConfig(workspace=Path(root), model=client.config)
        async with anyio.create_task_group() as group:

            def factory(history: History) -> Agent:
                return Agent(group, client, config, history=history)

            # Memory first, in a process that has built nothing else yet.
            mem = await memory(factory, args.memory_items)
            forks = await fork_cost(factory, sizes, args.reps)
            group.cancel_scope.cancel()
    bodies = serialise([int(s) for s in args.serialise_sizes.split(",") if s], 15)
    print(json.dumps({"fork": forks, "memory": mem, "serialise": bodies}))
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
