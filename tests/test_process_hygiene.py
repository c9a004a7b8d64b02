"""No process survives: cancels, timeouts, shutdown, SIGTERM to the server, the
editor dying, commands that ignore SIGTERM, double-fork into their own session
with a cleared environment, or flood stdout. Grandchildren included — with
cgroups, with the process-tree sweep alone, and in the sandbox (whose pid
namespace hides the real pids from the command: the oracle finds the
processes by a unique argument instead)."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agentls.client.rpc import RpcClient
from agentls.testing.fake_model import FakeModel, Reply

from .support import (
    SANDBOX,
    WAIT,
    needle,
    pid_alive,
    pids_in,
    processes_with,
    until_set,
    wait_processes,
)


def tree(duration: str) -> str:
    """A child in the group, a grandchild, and a double-forked, env-cleared one
    in its own session — each a ``sleep`` of ``duration``."""
    return (
        f"sleep {duration} & "
        f"sh -c 'sleep {duration} & wait' & "
        f"env -i /bin/sh -c 'setsid /bin/sh -c \"sleep {duration} &\" &'; "
        "wait"
    )


MODES = pytest.mark.parametrize(
    "mode",
    [
        "cgroup",
        "sweep-only",
        pytest.param(
            "sandbox", marks=pytest.mark.skipif(not SANDBOX, reason="bubblewrap cannot run here")
        ),
    ],
)


class Editor:
    """A raw editor on the real server process: events recorded, waits bounded."""

    def __init__(self, client: RpcClient) -> None:
        self.client = client
        self.events: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        client.on_notification("agent/event", self._record)

    def _record(self, params: dict[str, Any]) -> None:
        self.events.append(params)
        self.changed.set()

    def output(self) -> str:
        return "".join(e["text"] for e in self.events if e["kind"] == "tool.output")

    async def pids(self, count: int) -> list[int]:
        await until_set(self.changed, lambda: self.output().count("pid=") >= count)
        return pids_in(self.output())


@asynccontextmanager
async def editor(fake: FakeModel, workspace: Path, mode: str = "sandbox") -> AsyncIterator[Editor]:
    env = {**os.environ, "AGENTLS_CGROUPS": "off" if mode == "sweep-only" else "on"}
    client = await RpcClient.spawn([sys.executable, "-m", "agentls", "serve"], env=env)
    options: dict[str, Any] = {"workspace": str(workspace), "baseUrl": fake.base_url}
    if mode != "sandbox":
        options.update(sandbox="off", approval="never")
    await client.initialize(options, str(workspace))
    try:
        yield Editor(client)
    finally:
        if client.process.returncode is None:
            await client.shutdown()


async def gone(pids: list[int]) -> None:
    """All dead *now* (no waiting: the server answered only after they died)."""
    alive = [pid for pid in pids if pid_alive(pid)]
    assert not alive, f"still running: {alive}"


@MODES
async def test_cancelled_turn_kills_the_whole_tree(tmp_path: Path, mode: str) -> None:
    duration = needle()
    async with FakeModel() as fake, editor(fake, tmp_path, mode) as ed:
        fake.script(Reply.tool_call("exec_command", {"cmd": tree(duration)}))
        msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
        pids = await wait_processes(duration, 3)
        ed.client.cancel(msg_id)
        result = await asyncio.wait_for(future, WAIT)
        await gone(pids)
        assert not processes_with(duration)
        assert result["status"] == "cancelled"
        assert result["receipt"]["survivingProcesses"] == 0
        assert result["receipt"]["killedProcesses"] >= 4


@MODES
async def test_leftovers_of_a_finished_command_are_killed(tmp_path: Path, mode: str) -> None:
    duration = needle()
    async with FakeModel() as fake, editor(fake, tmp_path, mode) as ed:
        daemon = (
            f"env -i /bin/sh -c 'setsid /bin/sh -c \"sleep {duration} &\" &'; "
            f"while ! pgrep -fx 'sleep {duration}' >/dev/null; do sleep 0.01; done"
        )
        fake.script(Reply.tool_call("exec_command", {"cmd": daemon}), Reply.text("done"))
        result = await ed.client.call("agent/submit", {"prompt": "go"})
        assert result["status"] == "completed"
        assert not processes_with(duration)


@MODES
async def test_a_command_that_ignores_sigterm_is_killed(tmp_path: Path, mode: str) -> None:
    duration = needle()
    async with FakeModel() as fake, editor(fake, tmp_path, mode) as ed:
        stubborn = f"trap '' TERM INT HUP; sleep {duration} & wait"
        fake.script(Reply.tool_call("exec_command", {"cmd": stubborn}))
        msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
        pids = await wait_processes(duration, 1)
        ed.client.cancel(msg_id)
        assert (await asyncio.wait_for(future, WAIT))["status"] == "cancelled"
        await gone(pids)


async def test_a_flood_of_output_is_capped_and_killed(tmp_path: Path) -> None:
    flood = needle()
    async with FakeModel() as fake, editor(fake, tmp_path) as ed:
        fake.script(
            Reply.tool_call(
                "exec_command", {"cmd": f"exec -a agentls-{flood} yes flood", "timeout_ms": 1500}
            ),
            Reply.text("survived"),
        )
        result = await ed.client.call("agent/submit", {"prompt": "go"})
        assert result["status"] == "completed" and result["finalMessage"] == "survived"
        output = fake.requests[1].body["input"][-1]["output"]
        assert "timed out" in output and "bytes of output omitted" in output
        assert len(output) < 40_000
        assert not processes_with(f"agentls-{flood}")
        # The editor got the flood as a few coalesced notifications, and still works.
        assert sum(e["kind"] == "tool.output" for e in ed.events) < 500
        assert await ed.client.call("agent/setEffort", {"effort": "low"})


@pytest.mark.parametrize("how", ["sigterm", "stdin-closed", "shutdown"])
async def test_the_server_going_away_takes_everything_with_it(tmp_path: Path, how: str) -> None:
    duration = needle()
    async with FakeModel() as fake, editor(fake, tmp_path) as ed:
        client = ed.client
        fake.script(Reply.tool_call("exec_command", {"cmd": tree(duration)}))
        _, future = client.request("agent/submit", {"prompt": "go"})
        pids = await wait_processes(duration, 3)
        if how == "sigterm":
            client.process.send_signal(signal.SIGTERM)
        elif how == "stdin-closed":  # the editor was SIGKILLed: its end of the pipe closes
            assert client.process.stdin is not None
            client.process.stdin.close()
        else:
            await asyncio.wait_for(client.call("shutdown"), WAIT)
            client.notify("exit")
        code = await asyncio.wait_for(client.process.wait(), WAIT)
        assert code == 0
        await gone(pids)
        if how != "stdin-closed":
            # Every pending request was answered before the server went away.
            assert future.done() and future.result()["status"] == "cancelled"


async def gone_within(needle_text: str, seconds: float) -> list[int]:
    """What is still running with ``needle_text`` after up to ``seconds``
    (dying processes send no event: poll, boundedly)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (left := processes_with(needle_text)) and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    return left


@pytest.mark.skipif(not SANDBOX, reason="bubblewrap cannot run here")
async def test_kill_9_of_the_server_kills_its_sandboxed_commands_at_once(tmp_path: Path) -> None:
    duration = needle()
    async with FakeModel() as fake, editor(fake, tmp_path) as ed:
        fake.script(Reply.tool_call("exec_command", {"cmd": tree(duration)}))
        ed.client.request("agent/submit", {"prompt": "go"})
        await wait_processes(duration, 3)
        ed.client.process.kill()
        await ed.client.process.wait()
        # The sandbox dies with its parent (--die-with-parent), and with it its
        # pid namespace: every process in it, whatever session it moved to.
        assert await gone_within(duration, 1.0) == []


@pytest.mark.parametrize("mode", ["cgroup", "sweep-only"])
async def test_kill_9_of_an_unsandboxed_server(tmp_path: Path, mode: str) -> None:
    """Without the sandbox the command's leader dies with the server (a
    parent-death signal); what it started is killed by the next server's
    start-up sweep: its cgroup, or (sweep-only) the processes with its marker."""
    duration = needle()
    command = (
        tree(duration)
        if mode == "cgroup"
        else f"sleep {duration} & setsid sh -c 'sleep {duration} & wait' & wait"
    )
    count = 3 if mode == "cgroup" else 2
    async with FakeModel() as fake:
        async with editor(fake, tmp_path, mode) as ed:
            fake.script(Reply.tool_call("exec_command", {"cmd": command}))
            ed.client.request("agent/submit", {"prompt": "go"})
            await wait_processes(duration, count)
            assert processes_with(f"bash\0-lc\0{command}"), "the command's shell runs"
            ed.client.process.kill()
            await ed.client.process.wait()
            assert await gone_within(f"bash\0-lc\0{command}", 1.0) == []
        async with editor(fake, tmp_path, mode):
            assert await gone_within(duration, WAIT) == []


def test_commands_run_in_a_cgroup_where_possible() -> None:
    from agentls.tools import cgroups

    cgroup = cgroups.CommandCgroup.create()
    if cgroup is None:
        pytest.skip("no writable cgroup v2 hierarchy here; the process-tree sweep is used")
    try:
        ready, told = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child joins the cgroup, says so, and waits to be killed
            with open(cgroup.procs_file, "w") as f:
                f.write(str(os.getpid()))
            os.write(told, b"in")
            os.execvp("sleep", ["sleep", "300"])
        os.close(told)
        readable, _, _ = select.select([ready], [], [], WAIT)
        assert readable and os.read(ready, 2) == b"in"
        os.close(ready)
        assert pid in cgroup.pids()
        cgroup.kill()
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    finally:
        assert cgroup.remove()


@MODES
async def test_a_cancel_right_as_the_command_starts_still_kills_it(
    tmp_path: Path, mode: str
) -> None:
    # The cancel lands before the command's shell has even moved into its
    # cgroup (or forked anything): it must still die, and the answer come.
    duration = needle()
    async with FakeModel() as fake, editor(fake, tmp_path, mode) as ed:
        fake.script(Reply.tool_call("exec_command", {"cmd": f"sleep {duration}"}))
        msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
        async with asyncio.timeout(WAIT):
            while not any(e["kind"] == "tool.started" for e in ed.events):
                ed.changed.clear()
                await ed.changed.wait()
        ed.client.cancel(msg_id)
        result = await asyncio.wait_for(future, WAIT)
        assert result["status"] == "cancelled"
        assert not processes_with(duration)
