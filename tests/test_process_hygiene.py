"""No process survives: cancels, timeouts, shutdown, SIGTERM to the server, the
editor dying, commands that ignore SIGTERM, double-fork into their own session
with a cleared environment, or flood stdout. Grandchildren included."""

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

from .support import WAIT, pid_alive, pids_in

# A child in the group, a grandchild, and a double-forked, env-cleared one in its own session.
TREE = (
    "sleep 300 & echo pid=$!; "
    "sh -c 'sleep 300 & echo pid=$!; wait' & "
    "env -i /bin/sh -c 'setsid /bin/sh -c \"sleep 300 & echo pid=\\$!\" &'; "
    "wait"
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
        async with asyncio.timeout(WAIT):
            while self.output().count("pid=") < count:
                self.changed.clear()
                await self.changed.wait()
        return pids_in(self.output())


@asynccontextmanager
async def editor(
    fake: FakeModel, workspace: Path, *, cgroups: bool = True
) -> AsyncIterator[Editor]:
    env = {**os.environ, "AGENTLS_CGROUPS": "on" if cgroups else "off"}
    client = await RpcClient.spawn([sys.executable, "-m", "agentls", "serve"], env=env)
    await client.initialize({"workspace": str(workspace), "baseUrl": fake.base_url}, str(workspace))
    try:
        yield Editor(client)
    finally:
        if client.process.returncode is None:
            await client.shutdown()


async def gone(pids: list[int]) -> None:
    """All dead *now* (no waiting: the server answered only after they died)."""
    alive = [pid for pid in pids if pid_alive(pid)]
    assert not alive, f"still running: {alive}"


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "sweep-only"])
async def test_cancelled_turn_kills_the_whole_tree(tmp_path: Path, cgroups: bool) -> None:
    async with FakeModel() as fake, editor(fake, tmp_path, cgroups=cgroups) as ed:
        fake.script(Reply.tool_call("exec_command", {"cmd": TREE}))
        msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
        pids = await ed.pids(3)
        assert all(pid_alive(pid) for pid in pids)
        ed.client.cancel(msg_id)
        result = await asyncio.wait_for(future, WAIT)
        await gone(pids)
        assert result["status"] == "cancelled"
        assert result["receipt"]["survivingProcesses"] == 0
        assert result["receipt"]["killedProcesses"] >= 4


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "sweep-only"])
async def test_leftovers_of_a_finished_command_are_killed(tmp_path: Path, cgroups: bool) -> None:
    async with FakeModel() as fake, editor(fake, tmp_path, cgroups=cgroups) as ed:
        daemon = "env -i /bin/sh -c 'setsid /bin/sh -c \"sleep 300 & echo pid=\\$!\" &'; sleep 0.2"
        fake.script(Reply.tool_call("exec_command", {"cmd": daemon}), Reply.text("done"))
        result = await ed.client.call("agent/submit", {"prompt": "go"})
        assert result["status"] == "completed"
        (pid,) = pids_in(ed.output())
        await gone([pid])


async def test_a_command_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    async with FakeModel() as fake, editor(fake, tmp_path) as ed:
        stubborn = "trap '' TERM INT HUP; sleep 300 & echo pid=$!; echo pid=$$; wait"
        fake.script(Reply.tool_call("exec_command", {"cmd": stubborn}))
        msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
        pids = await ed.pids(2)
        ed.client.cancel(msg_id)
        assert (await asyncio.wait_for(future, WAIT))["status"] == "cancelled"
        await gone(pids)


async def test_a_flood_of_output_is_capped_and_killed(tmp_path: Path) -> None:
    async with FakeModel() as fake, editor(fake, tmp_path) as ed:
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "echo pid=$$; yes flood", "timeout_ms": 1500}),
            Reply.text("survived"),
        )
        result = await ed.client.call("agent/submit", {"prompt": "go"})
        assert result["status"] == "completed" and result["finalMessage"] == "survived"
        output = fake.requests[1].body["input"][-1]["output"]
        assert "timed out" in output and "bytes of output omitted" in output
        assert len(output) < 40_000
        (pid,) = pids_in(ed.output()[:200])
        await gone([pid])
        # The editor got the flood as a few coalesced notifications, and still works.
        assert sum(e["kind"] == "tool.output" for e in ed.events) < 500
        assert await ed.client.call("agent/setEffort", {"effort": "low"})


@pytest.mark.parametrize("how", ["sigterm", "stdin-closed", "shutdown"])
async def test_the_server_going_away_takes_everything_with_it(tmp_path: Path, how: str) -> None:
    async with FakeModel() as fake:
        client = await RpcClient.spawn([sys.executable, "-m", "agentls", "serve"])
        await client.initialize(
            {"workspace": str(tmp_path), "baseUrl": fake.base_url}, str(tmp_path)
        )
        ed = Editor(client)
        fake.script(Reply.tool_call("exec_command", {"cmd": TREE}))
        _, future = client.request("agent/submit", {"prompt": "go"})
        pids = await ed.pids(3)
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


def _running(needle: str) -> list[int]:
    """Processes whose command line contains ``needle``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if needle.encode() in f.read() and pid_alive(int(name)):
                        found.append(int(name))
            except OSError:
                pass
    return found


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "sweep-only"])
async def test_a_cancel_right_as_the_command_starts_still_kills_it(
    tmp_path: Path, cgroups: bool
) -> None:
    # The cancel lands before the command's shell has even moved into its
    # cgroup (or forked anything): it must still die, and the answer come.
    needle = f"300.{os.getpid()}{int(cgroups)}7"
    async with FakeModel() as fake, editor(fake, tmp_path, cgroups=cgroups) as ed:
        fake.script(Reply.tool_call("exec_command", {"cmd": f"sleep {needle}"}))
        msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
        async with asyncio.timeout(WAIT):
            while not any(e["kind"] == "tool.started" for e in ed.events):
                ed.changed.clear()
                await ed.changed.wait()
        ed.client.cancel(msg_id)
        result = await asyncio.wait_for(future, WAIT)
        assert result["status"] == "cancelled"
        assert not _running(needle)
