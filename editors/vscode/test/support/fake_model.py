"""The fake model for the extension's tests and e2e run.

``agentls.testing.fake_model`` (the project's scripted Responses API fake)
serving the JSON script given on the command line, one reply per request, and
printing each request's body as ``request {json}`` on stdout so a test can
check what reached the model (model name, effort, a steer, the selection).
When the script is exhausted the request gets an HTTP 400 (not retried), so
a test that asks once too often fails at once.

A script item may hold its stream at a point until the test says so:
``{"hold": "NAME", "after": K, "reply": {...}}`` sends K events after
``response.created``, prints ``reached NAME``, and waits for the line
``release NAME`` on stdin.

    python fake_model.py SCRIPT.json    # prints "listening http://127.0.0.1:PORT/v1"
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import threading
from pathlib import Path

from agentls.testing.fake_model import FakeModel, Gate, RecordedRequest, Reply


def load(script: str, gates: dict[str, Gate]) -> list[Reply]:
    replies = []
    for item in json.loads(Path(script).read_text()):
        if isinstance(item, dict) and "hold" in item:
            gate = gates.setdefault(item["hold"], Gate(item["hold"]))
            replies.append(
                Reply.from_json(item["reply"]).with_hold(gate, after=item.get("after", 0))
            )
        else:
            replies.append(Reply.from_json(item))
    return replies


def read_releases(gates: dict[str, Gate]) -> None:
    for line in sys.stdin:
        command, _, name = line.strip().partition(" ")
        if command == "release" and name in gates:
            gates[name].release()


async def report_reached(gates: dict[str, Gate]) -> None:
    async def one(gate: Gate) -> None:
        await gate.wait_reached(timeout=None)
        print(f"reached {gate.name}", flush=True)

    await asyncio.gather(*(one(gate) for gate in gates.values()))


async def serve(script: str) -> None:
    gates: dict[str, Gate] = {}
    replies = load(script, gates)
    threading.Thread(target=read_releases, args=(gates,), daemon=True).start()

    def answer(request: RecordedRequest) -> Reply:
        print("request " + json.dumps(request.body), flush=True)
        if replies:
            return replies.pop(0)
        return Reply.http_error(400, message="the test script is exhausted")

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    fake = FakeModel()
    fake.on_request(answer)
    async with fake:
        print(f"listening {fake.base_url}", flush=True)
        reached = asyncio.create_task(report_reached(gates))
        await stop.wait()
        reached.cancel()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fake_model.py SCRIPT.json")
    asyncio.run(serve(sys.argv[1]))
