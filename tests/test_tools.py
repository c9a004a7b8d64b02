"""The tools on their own: real subprocesses, real files, confinement."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.config import ToolConfig
from agentls.tools.base import ToolContext
from agentls.tools.exec_command import ExecCommand
from agentls.tools.processes import ProcessScope
from agentls.tools.read_file import ReadFile
from agentls.tools.registry import ToolBox, parse_call
from agentls.tools.update_plan import UpdatePlan
from agentls.tools.workspace import PathOutsideWorkspace, Workspace

from .support import pid_alive, pids_in


class Recorder:
    def __init__(self) -> None:
        self.output: list[str] = []
        self.plans: list[tuple[str | None, list[dict[str, str]]]] = []
        self.got_output = anyio.Event()

    def emit_output(self, text: str) -> None:
        self.output.append(text)
        self.got_output.set()

    def emit_plan(self, explanation: str | None, steps: list[dict[str, str]]) -> None:
        self.plans.append((explanation, steps))


def context(root: Path, recorder: Recorder, **config: Any) -> ToolContext:
    return ToolContext(
        workspace=Workspace(root),
        config=ToolConfig(**config),
        processes=ProcessScope(),
        emit_output=recorder.emit_output,
        emit_plan=recorder.emit_plan,
    )


TOOLS = ToolBox([ExecCommand(), ReadFile(), UpdatePlan()])


async def call(ctx: ToolContext, name: str, **arguments: Any) -> Any:
    item = {
        "type": "function_call",
        "call_id": "c1",
        "name": name,
        "arguments": json.dumps(arguments),
    }
    return await TOOLS.run(parse_call(item), ctx)


async def test_exec_command_reports_exit_code_and_output(tmp_path: Path) -> None:
    rec = Recorder()
    result = await call(
        context(tmp_path, rec), "exec_command", cmd="echo hello; echo oops >&2; exit 3"
    )
    assert result.exit_code == 3
    assert result.status == "failed"
    assert "Exit code: 3" in result.output
    assert "hello" in result.output and "oops" in result.output
    assert "hello" in "".join(rec.output)


async def test_exec_command_runs_in_workdir_inside_workspace(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    rec = Recorder()
    ctx = context(tmp_path, rec)
    result = await call(ctx, "exec_command", cmd="pwd", workdir="sub")
    assert result.exit_code == 0
    assert str(tmp_path.resolve() / "sub") in result.output
    refused = await call(ctx, "exec_command", cmd="pwd", workdir="..")
    assert refused.status == "failed" and "outside the workspace" in refused.output


async def test_exec_command_keeps_head_and_tail_of_long_output(tmp_path: Path) -> None:
    rec = Recorder()
    ctx = context(tmp_path, rec, output_head_bytes=100, output_tail_bytes=100)
    result = await call(ctx, "exec_command", cmd="echo START; seq 1 20000; echo END")
    assert result.exit_code == 0
    assert "START" in result.output and "END" in result.output
    assert "bytes of output omitted" in result.output
    assert len(result.output) < 600


async def test_exec_command_hides_secret_environment(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-123456")
    monkeypatch.setenv("MY_PASSWORD", "hunter2")
    monkeypatch.setenv("HARMLESS", "visible")
    rec = Recorder()
    result = await call(context(tmp_path, rec), "exec_command", cmd="env")
    assert "visible" in result.output
    assert "sk-secret-value" not in result.output
    assert "hunter2" not in result.output


async def test_exec_command_timeout_kills_the_whole_tree(tmp_path: Path) -> None:
    rec = Recorder()
    ctx = context(tmp_path, rec)
    # A child in the group and a grandchild that leaves it with setsid.
    cmd = "sleep 300 & echo pid=$!; setsid sh -c 'sleep 300 & echo pid=$!; wait' & wait"
    result = await call(ctx, "exec_command", cmd=cmd, timeout_ms=1500)
    assert result.status == "failed"
    assert "timed out" in result.output
    pids = pids_in(result.output)
    assert len(pids) == 2, result.output
    assert not any(pid_alive(pid) for pid in pids)


async def test_exec_command_kills_background_leftovers_when_done(tmp_path: Path) -> None:
    rec = Recorder()
    result = await call(context(tmp_path, rec), "exec_command", cmd="sleep 300 & echo pid=$!")
    assert result.exit_code == 0
    (pid,) = pids_in(result.output)
    assert not pid_alive(pid)


async def test_exec_command_bad_arguments_are_outputs(tmp_path: Path) -> None:
    rec = Recorder()
    ctx = context(tmp_path, rec)
    assert "missing required argument 'cmd'" in (await call(ctx, "exec_command")).output
    assert (
        "must be an integer" in (await call(ctx, "exec_command", cmd="true", timeout_ms="x")).output
    )
    bad_json = parse_call({"call_id": "c", "name": "exec_command", "arguments": "{nope"})
    result = await TOOLS.run(bad_json, ctx)
    assert result.status == "failed" and "not valid JSON" in result.output
    unknown = await call(ctx, "launch_rockets")
    assert "unknown tool 'launch_rockets'" in unknown.output


async def test_read_file_numbers_lines_with_offset_and_limit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    rec = Recorder()
    ctx = context(tmp_path, rec)
    result = await call(ctx, "read_file", path="a.txt", offset=3, limit=2)
    assert result.output.splitlines()[:2] == ["3\tline 3", "4\tline 4"]
    assert "offset=5" in result.output
    whole = await call(ctx, "read_file", path="a.txt")
    assert whole.output.splitlines()[-1] == "10\tline 10"
    past = await call(ctx, "read_file", path="a.txt", offset=50)
    assert past.status == "failed" and "past the end" in past.output
    (tmp_path / "bin").write_bytes(b"\x00\x01\x02")
    assert "binary" in (await call(ctx, "read_file", path="bin")).output


@pytest.mark.parametrize(
    "path", ["../outside.txt", "/etc/passwd", "link/secret.txt", "sub/../../x"]
)
async def test_file_tools_refuse_paths_outside(tmp_path: Path, path: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (tmp_path / "outside.txt").write_text("secret")
    (root / "link").symlink_to(outside)
    rec = Recorder()
    result = await call(context(root, rec), "read_file", path=path)
    assert result.status == "failed"
    assert "outside the workspace" in result.output
    assert "secret" not in result.output.replace("secret.txt", "")


def test_workspace_refuses_symlink_swapped_after_check(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "dir").mkdir(parents=True)
    (root / "dir" / "f.txt").write_text("inside")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("outside")
    workspace = Workspace(root)
    checked = workspace.resolve("dir/f.txt")
    # Between the check and the use, the directory becomes a symlink out.
    (root / "dir" / "f.txt").unlink()
    (root / "dir").rmdir()
    (root / "dir").symlink_to(outside)
    with pytest.raises(PermissionError, match="symlink"):
        workspace.open(checked)
    with pytest.raises(PathOutsideWorkspace):
        workspace.resolve("dir/f.txt")


def test_workspace_allows_absolute_paths_inside(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    (tmp_path / "x").write_text("x")
    assert workspace.resolve(str(tmp_path / "x")) == (tmp_path / "x").resolve()
    assert workspace.relative(workspace.resolve("x")) == "x"


async def test_update_plan_validates_and_reports(tmp_path: Path) -> None:
    rec = Recorder()
    ctx = context(tmp_path, rec)
    plan = [{"step": "read", "status": "completed"}, {"step": "fix", "status": "in_progress"}]
    result = await call(ctx, "update_plan", explanation="why", plan=plan)
    assert result.status == "completed"
    assert rec.plans == [("why", plan)]
    assert "[x] read" in result.output
    bad = await call(ctx, "update_plan", plan=[{"step": "a", "status": "done"}])
    assert bad.status == "failed" and "status must be one of" in bad.output


async def test_tool_output_streams_before_the_command_ends(tmp_path: Path) -> None:
    rec = Recorder()
    ctx = context(tmp_path, rec)
    fifo = tmp_path / "go"
    os.mkfifo(fifo)

    async def release_when_output_seen() -> None:
        await rec.got_output.wait()
        # The command is still blocked on the fifo: its first line arrived live.
        await anyio.to_thread.run_sync(lambda: fifo.write_text("go\n"))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(release_when_output_seen)
            result = await call(
                ctx, "exec_command", cmd=f"echo first; read x < {fifo}; echo second"
            )
    assert result.exit_code == 0
    assert rec.output[0].startswith("first")
