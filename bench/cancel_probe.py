"""Where a cancel's time goes, in-process: the agent core on the fake model,
a turn running ``sh -c 'sleep 300; true' & sleep 300; wait``, then
``TurnControl.cancel()`` under cProfile — only between the cancel and its
receipt, so the profile is of the cancel path alone (wall time: waiting shows
as the event loop's ``select``).

Run as ``python bench/cancel_probe.py REPS`` (by ``--profile cancel``).
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

import anyio

from agentls.agent.agent import Agent
from agentls.config import AgentConfig, ModelConfig
from agentls.model.client import ResponsesClient
from agentls.testing.fake_model import FakeModel, Reply


def _sleepers(marker: str) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if cmdline.startswith(b"sleep\0") and marker.encode() in cmdline:
                count += 1
    return count


async def main(reps: int) -> str:
    profiler = cProfile.Profile()
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-cancel-") as root:
        os.environ["HOME"] = root  # no user profile for `bash -lc`
        async with FakeModel() as fake:
            client = ResponsesClient(
                ModelConfig(model="bench", base_url=fake.base_url, api_key="bench")
            )
            config = AgentConfig(workspace=Path(root), model=client.config)
            async with anyio.create_task_group() as group:
                agent = Agent(group, client, config)
                for i in range(reps):
                    marker = f"300.{os.getpid() % 1000:03d}{i:06d}"
                    cmd = f"sh -c 'sleep {marker}; true' & sleep {marker}; wait"
                    fake.script(Reply.tool_call("exec_command", {"cmd": cmd}))
                    turn = agent.prompt(f"run {i}")
                    with anyio.fail_after(30):
                        while _sleepers(marker) < 2:  # noqa: ASYNC110 - polling /proc
                            await anyio.sleep(0.003)
                    control = turn.control
                    profiler.enable()
                    t0 = time.perf_counter_ns()
                    receipt = await control.cancel()
                    times.append((time.perf_counter_ns() - t0) / 1e6)
                    profiler.disable()
                    assert receipt.surviving_processes == 0
                await agent.shutdown()
                await client.aclose()
                group.cancel_scope.cancel()
    times.sort()
    out = io.StringIO()
    out.write(
        f"In-process TurnControl.cancel() → receipt, {reps} runs: "
        f"p50 {times[len(times) // 2]:.2f} ms, max {times[-1]:.2f} ms "
        f"(all: {', '.join(f'{t:.1f}' for t in times)})\n\n"
    )
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(35)
    stats.sort_stats("tottime").print_stats(20)
    return out.getvalue()


if __name__ == "__main__":
    print(anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 20))
