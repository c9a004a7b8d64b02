"""Baseline: the raw ``openai`` SDK consuming the fake's stream in one Python process.

Run by the driver as a subprocess (``python bench/sdk_worker.py --job ...``)
so that it has an interpreter of its own, like a server would, and prints one
JSON line per repetition. Two modes:

* ``typed``: ``client.responses.create(stream=True)`` and iterate the SDK's
  typed events (a pydantic model per event);
* ``lines``: the same call through ``with_streaming_response`` and
  ``json.loads`` per ``data:`` line — what a host that parses the lines itself
  can do at best.

Times are ``time.perf_counter_ns()`` (CLOCK_MONOTONIC), comparable with the
driver's. CPU is the consuming thread's (``time.thread_time_ns``).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
from typing import Any


def _prompt(kind: str, n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"[bench:{kind}:{n}] go"}]


async def _typed(client: Any, kind: str, n: int) -> dict[str, Any]:
    parts: list[str] = []
    first = 0
    cpu0 = time.thread_time_ns()
    t_call = time.perf_counter_ns()
    stream = await client.responses.create(model="gpt-fake", input=_prompt(kind, n), stream=True)
    async for event in stream:
        if event.type == "response.output_text.delta":
            if not first:
                first = time.perf_counter_ns()
            parts.append(event.delta)
        elif event.type == "response.completed":
            break
    t_done = time.perf_counter_ns()
    return _row(n, t_call, first, t_done, time.thread_time_ns() - cpu0, parts)


async def _lines(client: Any, kind: str, n: int) -> dict[str, Any]:
    parts: list[str] = []
    first = 0
    loads = json.loads
    cpu0 = time.thread_time_ns()
    t_call = time.perf_counter_ns()
    async with client.responses.with_streaming_response.create(
        model="gpt-fake", input=_prompt(kind, n), stream=True
    ) as response:
        async for line in response.http_response.aiter_lines():
            if not line.startswith("data:"):
                continue
            event = loads(line[5:])
            kind_ = event["type"]
            if kind_ == "response.output_text.delta":
                if not first:
                    first = time.perf_counter_ns()
                parts.append(event["delta"])
            elif kind_ == "response.completed":
                break
    t_done = time.perf_counter_ns()
    return _row(n, t_call, first, t_done, time.thread_time_ns() - cpu0, parts)


def _row(
    n: int, t_call: int, first: int, t_done: int, cpu_ns: int, parts: list[str]
) -> dict[str, Any]:
    text = "".join(parts)
    return {
        "n": n,
        "t_call_ns": t_call,
        "t_first_ns": first,
        "t_done_ns": t_done,
        "cpu_ns": cpu_ns,
        "deltas": len(parts),
        "chars": len(text),
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument(
        "--job",
        action="append",
        default=[],
        metavar="MODE:KIND:FIRST:REPS",
        help="MODE (typed or lines): measure REPS requests tagged [bench:KIND:N], N from FIRST "
        "(repeatable)",
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter_ns()
    import openai

    import_ms = (time.perf_counter_ns() - t0) / 1e6
    client = openai.AsyncOpenAI(api_key="bench", base_url=args.base_url, max_retries=0)
    print(json.dumps({"import_ms": import_ms}), flush=True)
    warm: set[str] = set()
    for job in args.job:
        mode, kind, first, reps = job.split(":")
        consume = _typed if mode == "typed" else _lines
        if mode not in warm:
            await consume(client, "warm", 0)  # connection and lazy imports: not measured
            warm.add(mode)
        for n in range(int(first), int(first) + int(reps)):
            row = await consume(client, kind, n)
            print(json.dumps({"mode": mode, "kind": kind, **row}), flush=True)
    await client.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
