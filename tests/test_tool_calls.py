"""Calls as models really make them: ``apply_patch <<'EOF'`` typed into
exec_command, freeform (custom tool) calls, built-in call types we never
offered; and read_file's bounds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.config import ToolConfig
from agentls.testing.fake_model import FakeModel, Reply
from agentls.tools.apply_patch import ApplyPatch
from agentls.tools.base import ToolContext
from agentls.tools.exec_command import ExecCommand
from agentls.tools.processes import ProcessScope
from agentls.tools.read_file import ReadFile
from agentls.tools.registry import ToolBox, ToolCall, parse_call
from agentls.tools.workspace import Workspace

from .support import WAIT, running_agent

TOOLS = ToolBox([ExecCommand(), ApplyPatch(), ReadFile()])
PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch"


def ctx(root: Path) -> ToolContext:
    return ToolContext(
        workspace=Workspace(root),
        config=ToolConfig(),
        processes=ProcessScope(),
        emit_output=lambda _: None,
        emit_plan=lambda *_: None,
    )


def command(cmd: str, **extra: Any) -> ToolCall:
    item = {
        "type": "function_call",
        "call_id": "c1",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": cmd, **extra}),
    }
    return parse_call(item)


@pytest.mark.parametrize(
    ("cmd", "extra", "made"),
    [
        (f"apply_patch <<'EOF'\n{PATCH}\nEOF", {}, "notes.txt"),
        (f'apply_patch <<"PATCH"\n{PATCH}\nPATCH\n', {}, "notes.txt"),
        (f"applypatch <<EOF\n{PATCH}\nEOF", {}, "notes.txt"),
        (f"cd sub && apply_patch <<'EOF'\n{PATCH}\nEOF", {}, "sub/notes.txt"),
        (f"apply_patch <<'EOF'\n{PATCH}\nEOF", {"workdir": "sub"}, "sub/notes.txt"),
    ],
)
async def test_a_patch_typed_as_a_command_is_applied_by_the_patch_tool(
    tmp_path: Path, cmd: str, extra: dict[str, Any], made: str
) -> None:
    (tmp_path / "sub").mkdir()
    routed = TOOLS.route(command(cmd, **extra), Workspace(tmp_path))
    assert routed.name == "apply_patch" and routed.call_id == "c1"
    assert TOOLS.title(routed, Workspace(tmp_path)) == f"Editing {made}"
    result = await TOOLS.run(routed, ctx(tmp_path))
    assert result.status == "completed", result.output
    assert (tmp_path / made).read_text() == "hello\n"


def test_other_commands_are_left_alone(tmp_path: Path) -> None:
    for cmd in [
        "ls",
        "echo apply_patch",
        "cat <<'EOF'\nx\nEOF",
        "cd ../.. && apply_patch <<E\nx\nE",
    ]:
        call = command(cmd)
        assert TOOLS.route(call, Workspace(tmp_path)) is call


async def test_the_agent_routes_it_and_answers_the_command_call(tmp_path: Path) -> None:
    cmd = f"apply_patch <<'EOF'\n{PATCH}\nEOF"
    async with (
        FakeModel(
            Reply.tool_call("exec_command", {"cmd": cmd}, call_id="c9"), Reply.text("done")
        ) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("write notes")
        await log.wait_finished(1)
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    started = log.of("tool.started")[0]
    assert (started.tool, started.title) == ("apply_patch", "Editing notes.txt")
    output = fake.requests[1].body["input"][-1]
    assert output["type"] == "function_call_output" and output["call_id"] == "c9"
    assert "command not found" not in output["output"]


@pytest.mark.parametrize(
    ("item", "output_type"),
    [
        (
            {"type": "shell_call", "call_id": "s1", "action": {"commands": ["ls"]}},
            "shell_call_output",
        ),
        (
            {"type": "local_shell_call", "call_id": "s2", "action": {"command": ["ls"]}},
            "local_shell_call_output",
        ),
        (
            {"type": "apply_patch_call", "call_id": "s3", "operation": {"type": "create_file"}},
            "apply_patch_call_output",
        ),
    ],
)
async def test_built_in_calls_we_never_offered_are_answered_as_unavailable(
    tmp_path: Path, item: dict[str, Any], output_type: str
) -> None:
    call = parse_call(item)
    assert call.kind == item["type"]
    assert TOOLS.title(call, Workspace(tmp_path)) == f"Unavailable tool: {item['type']}"
    result = await TOOLS.run(call, ctx(tmp_path))
    assert result.status == "failed" and "not available here" in result.output


async def test_a_freeform_call_of_a_tool_without_free_input_says_so(tmp_path: Path) -> None:
    call = parse_call(
        {"type": "custom_tool_call", "call_id": "c", "name": "read_file", "input": "a.txt"}
    )
    result = await TOOLS.run(call, ctx(tmp_path))
    assert result.status == "failed" and "takes JSON arguments" in result.output


async def read(root: Path, **arguments: Any) -> str:
    item = {
        "type": "function_call",
        "call_id": "r",
        "name": "read_file",
        "arguments": json.dumps(arguments),
    }
    result = await TOOLS.run(parse_call(item), ctx(root))
    assert result.status == "completed", result.output
    return result.output


async def test_read_file_gives_at_most_256_lines_and_says_how_to_read_on(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("".join(f"{n}\n" for n in range(1, 1001)))
    first = (await read(tmp_path, path="long.txt", limit=5000)).splitlines()
    assert first[255] == "256\t256" and len(first) == 257
    assert first[-1] == "… 744 more lines; read on with offset=257"


async def test_read_file_gives_at_most_32_kib(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("w" * 1000 + "\n") * 100)
    text = await read(tmp_path, path="wide.txt")
    assert len(text.encode()) <= 32 * 1024 + 100
    last = text.splitlines()[-1]
    assert last.startswith("… ") and "read on with offset=" in last
    shown = len(text.splitlines()) - 1
    assert shown < 40 and last.endswith(f"offset={shown + 1}")
