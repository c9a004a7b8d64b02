"""The MCP pieces on their own: configuration, tool names, the consent store,
results as output, approval of MCP tools, and one server's runner (with the
test MCPServer, in this process)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.approval import Allowances, needs_approval, request_for
from agentls.mcp import config as mcp_config
from agentls.mcp.config import HttpTarget, StdioTarget, load, parse_entry
from agentls.mcp.consent import ConsentRequest, ConsentStore
from agentls.mcp.names import MAX_LENGTH, function_name, valid
from agentls.mcp.results import output_text, to_tool_result
from agentls.mcp.tool import McpTool, parameters
from agentls.tools.base import ToolResult
from agentls.tools.registry import ToolBox, ToolCall
from agentls.tools.workspace import Workspace

from .mcp_support import FIXTURE
from .support import WAIT

ENV = {"HOME": "/home/u", "TOKEN": "t0k", "EMPTY": ""}


# --- configuration ------------------------------------------------------------------------


def test_a_stdio_entry() -> None:
    entry = {"command": "node", "args": ["server.js", "--root", "${HOME}"], "env": {"K": "v"}}
    spec = parse_entry("files", entry, "user", ENV)
    assert spec.error is None and spec.transport == "stdio"
    assert spec.target == StdioTarget("node", ("server.js", "--root", "/home/u"), {"K": "v"})
    assert spec.command_line == "node server.js --root /home/u" and spec.url is None


def test_an_http_entry_with_headers_from_the_environment() -> None:
    entry = {"type": "http", "url": "https://mcp.example/mcp", "headers": {"A": "Bearer ${TOKEN}"}}
    spec = parse_entry("remote", entry, "options", ENV)
    assert spec.target == HttpTarget("https://mcp.example/mcp", {"A": "Bearer t0k"})
    assert spec.transport == "http" and spec.url == "https://mcp.example/mcp"
    # The display never shows headers (they carry tokens).
    assert spec.command_line is None
    assert parse_entry("r", {"url": "http://h/mcp"}, "user", ENV).transport == "http"


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ("node server.js", "must be an object"),
        ({}, 'needs a "command"'),
        ({"command": ""}, "'command' must be a non-empty string"),
        ({"command": "x", "args": "a b"}, "'args' must be an array of strings"),
        ({"command": "x", "env": {"N": 1}}, "'env' must be an object of strings"),
        ({"type": "sse", "url": "http://h/sse"}, "SSE transport is not supported"),
        ({"type": "websocket", "url": "ws://h"}, 'unknown "type"'),
        ({"type": "http", "url": "ftp://h"}, "must start with http:// or https://"),
        (
            {"command": "x", "args": ["${NOPE}"]},
            "args[0]: the environment variable NOPE is not set",
        ),
    ],
)
def test_a_bad_entry_is_a_failed_server_saying_why(entry: Any, error: str) -> None:
    spec = parse_entry("s", entry, "user", ENV)
    assert spec.target is None and spec.error is not None and error in spec.error


def test_variables_with_defaults_and_unknown_keys() -> None:
    entry = {"command": "x", "args": ["${NOPE:-fallback}", "${EMPTY:-used}", "${EMPTY}"], "to": 1}
    spec = parse_entry("s", entry, "user", ENV)
    assert isinstance(spec.target, StdioTarget)
    assert spec.target.args == ("fallback", "used", "")
    assert spec.notes == ("unknown key 'to' ignored",)
    assert parse_entry(" ", {"command": "x"}, "user", ENV).error == (
        "a server needs a non-empty name"
    )


def test_sources_merge_in_order_and_problems_are_said(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    user = tmp_path / "cfg" / "agentls" / "mcp.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"mcpServers": {"a": {"command": "user-a"}, "b": {"command": "b"}}}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"b": {"command": "proj-b"}, "c": {"command": "c"}}})
    )
    config = load({"a": {"command": "opt-a"}}, workspace, env=env)
    assert [(s.name, s.source, s.command_line) for s in config.servers] == [
        ("a", "options", "opt-a"),
        ("b", "user", "b"),
        ("c", "project", "c"),
    ]
    assert len(config.problems) == 2
    assert "the server 'a' is ignored" in config.problems[0]
    assert str(workspace / ".mcp.json") in config.problems[1]


@pytest.mark.parametrize(
    ("text", "problem"),
    [("{not json", "not valid JSON"), ('{"mcpServers": []}', 'expected {"mcpServers"')],
)
def test_an_unusable_file_is_a_problem_not_a_failure(
    tmp_path: Path, text: str, problem: str
) -> None:
    (tmp_path / ".mcp.json").write_text(text)
    config = load(None, tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert config.servers == [] and len(config.problems) == 1 and problem in config.problems[0]
    assert load([1], tmp_path / "none", env={}).problems[0] == (
        "initializationOptions.mcpServers must be an object"
    )


def test_folders_follow_xdg_and_agentls_state_dir() -> None:
    assert mcp_config.config_dir({"XDG_CONFIG_HOME": "/c"}) == Path("/c/agentls")
    assert mcp_config.state_dir({"XDG_STATE_HOME": "/s"}) == Path("/s/agentls")
    assert mcp_config.state_dir({"AGENTLS_STATE_DIR": "/x", "XDG_STATE_HOME": "/s"}) == Path("/x")
    assert mcp_config.state_dir({}) == Path.home() / ".local" / "state" / "agentls"


# --- tool names ---------------------------------------------------------------------------


def test_function_names_fit_the_responses_api() -> None:
    assert function_name("github", "search_issues") == "mcp__github__search_issues"
    assert function_name("my server", "files.read/all") == "mcp__my_server__files_read_all"
    long = function_name("a-server-with-a-rather-long-name", "and_a_tool_with_an_even_longer_name")
    assert len(long) == MAX_LENGTH and valid(long)
    assert long == function_name(
        "a-server-with-a-rather-long-name", "and_a_tool_with_an_even_longer_name"
    )
    first = function_name("s", "a.b")
    second = function_name("s", "a_b", {first})
    assert first == "mcp__s__a_b" and second != first and valid(second)


# --- consent ------------------------------------------------------------------------------


def test_decisions_are_remembered_per_project_and_configuration(tmp_path: Path) -> None:
    state = tmp_path / "state"
    spec = parse_entry("proj", {"command": "node", "args": ["s.js"]}, "project", ENV)
    store = ConsentStore(state, tmp_path / "one")
    assert store.decision(spec) is None
    store.remember(spec, "allow")
    assert store.decision(spec) == "allow"
    assert ConsentStore(state, tmp_path / "two").decision(spec) is None  # another project
    changed = parse_entry("proj", {"command": "node", "args": ["evil.js"]}, "project", ENV)
    assert store.decision(changed) is None  # a changed entry is asked about again
    store.remember(changed, "deny")
    assert store.decision(changed) == "deny"
    assert store.forget(["proj", "other"]) == ["proj"]
    assert store.decision(changed) is None
    (state / "mcp-consent.json").write_text("{broken")
    assert store.decision(spec) is None
    store.remember(spec, "allow")  # an unreadable file is replaced, not a failure
    assert store.decision(spec) == "allow"


def test_the_question_says_what_would_run() -> None:
    spec = parse_entry("db", {"command": "psql-mcp", "args": ["--write"]}, "project", ENV)
    question = ConsentRequest.of(spec, Path("/ws/.mcp.json")).question()
    assert "/ws/.mcp.json" in question and "'db'" in question
    assert "`psql-mcp --write`" in question and "outside the sandbox" in question


# --- results ------------------------------------------------------------------------------


class Block:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def result(*content: Any, structured: Any = None, is_error: bool = False) -> Any:
    return Block(content=list(content), structured_content=structured, is_error=is_error)


def test_every_kind_of_content_becomes_text() -> None:
    text = output_text(
        [
            Block(type="text", text="hello"),
            Block(type="image", data="QUJD" * 300, mime_type="image/png"),
            Block(type="audio", data="QUJD", mime_type="audio/wav"),
            Block(
                type="resource_link",
                name="README",
                uri="file:///r.md",
                mime_type="text/markdown",
                description="the readme",
            ),
            Block(type="resource", resource=Block(uri="mem://a", mime_type=None, text="inside")),
            Block(type="resource", resource=Block(uri="mem://b", mime_type="x/y", blob="QUJD")),
            Block(type="hologram"),
        ]
    )
    assert text.split("\n") == [
        "hello",
        "[image: image/png, 900 bytes; the image itself is shown to the user, not sent to you]",
        "[audio: audio/wav, 3 bytes; the audio itself is shown to the user, not sent to you]",
        "[resource link: README <file:///r.md> (text/markdown): the readme]",
        "[resource <mem://a>]",
        "inside",
        "[resource <mem://b> (x/y): 3 bytes of binary data]",
        "[content of type 'hologram', not shown]",
    ]


def test_results_errors_structured_content_and_bounds() -> None:
    assert to_tool_result(result(structured={"temp": 21}), 100, 100).output == '{"temp": 21}'
    assert to_tool_result(result(), 100, 100) == ToolResult("(no output)")
    failed = to_tool_result(result(Block(type="text", text="no such file"), is_error=True), 99, 99)
    assert failed == ToolResult("error: no such file", status="failed")
    long = to_tool_result(result(Block(type="text", text="x" * 10_000)), 100, 50)
    assert long.output.startswith("x" * 100) and "9850 bytes of output omitted" in long.output


# --- the tool and its approval -----------------------------------------------------------------


async def _never(tool: str, args: dict[str, Any], head: int, tail: int) -> ToolResult:
    raise AssertionError("not called")


def test_an_mcp_tool_as_the_model_and_the_editor_see_it() -> None:
    tool = McpTool(
        "mcp__gh__search",
        "gh",
        "search",
        description=None,
        schema={"properties": {"q": {"type": "string"}}, "required": ["q"]},
        read_only=True,
        call=_never,
    )
    assert tool.spec() == {
        "type": "function",
        "name": "mcp__gh__search",
        "description": "The tool 'search' of the MCP server 'gh'.",
        "strict": False,
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
        },
    }
    assert tool.title({}, None) == "gh \u203a search"  # type: ignore[arg-type]
    assert parameters(None) == {"type": "object", "properties": {}}


class Source:
    def __init__(self, tools: list[McpTool]) -> None:
        self.version = 0
        self._tools = tools

    def tools(self) -> list[McpTool]:
        return self._tools


def test_the_tool_box_offers_what_the_source_has_now() -> None:
    writer = McpTool(
        "mcp__s__w", "s", "w", description="w", schema={}, read_only=False, call=_never
    )
    reader = McpTool("mcp__s__r", "s", "r", description="r", schema={}, read_only=True, call=_never)
    source = Source([])
    box = ToolBox.default(source)
    assert not [spec for spec in box.specs if spec["name"].startswith("mcp__")]
    source._tools = [writer, reader]
    source.version = 1
    assert [spec["name"] for spec in box.specs][-2:] == ["mcp__s__w", "mcp__s__r"]
    assert box.get("mcp__s__w") is writer and box.get("mcp__s__r") is reader
    assert box.get("no_such_tool") is None
    read_file, apply_patch = box.get("read_file"), box.get("apply_patch")
    assert read_file is not None and read_file.read_only
    assert apply_patch is not None and not apply_patch.read_only


@pytest.mark.parametrize(
    ("policy", "read_only", "asks"),
    [
        ("never", False, False),
        ("on-request", False, True),
        ("always", False, True),
        ("on-request", True, False),
        ("always", True, False),
    ],
)
def test_approval_of_mcp_tools(policy: Any, read_only: bool, asks: bool, tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    call = ToolCall("c1", "mcp__s__w", {"path": "x"})
    allowances = Allowances()

    def ask(call: ToolCall) -> bool:
        # MCP servers are never sandboxed: they are the user's own programs.
        allowed = allowances.covers(call, workspace)
        return needs_approval(policy, call, read_only=read_only, sandboxed=False, allowed=allowed)

    assert ask(call) is asks
    request = request_for(7, call, "s \u203a w", workspace)
    assert (request.tool, request.command) == ("mcp__s__w", 'mcp__s__w {"path":"x"}')
    allowances.remember(call, workspace)  # "allow for the session": that exact call
    assert not ask(call)
    assert ask(ToolCall("c2", "mcp__s__w", {"path": "y"})) is asks
    assert ask(ToolCall("c3", "mcp__s__other", {})) is asks


# --- one runner, in this process -----------------------------------------------------------


def _runner(entry: dict[str, Any], tmp_path: Path, **limits: Any) -> Any:
    from agentls.mcp.runner import ServerRunner

    spec = parse_entry("fx", entry, "options", {})
    settings = {"startup_timeout": WAIT, "call_timeout": WAIT, "max_restarts": 3} | limits
    return ServerRunner(spec, tmp_path, lambda runner: None, **settings)


async def test_a_server_that_never_answers_initialize_fails_after_the_timeout(
    tmp_path: Path,
) -> None:
    hangs = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
    runner = _runner(hangs, tmp_path, startup_timeout=0.5)
    async with anyio.create_task_group() as group:
        group.start_soon(runner.run)
        runner.allow()
        with anyio.fail_after(WAIT):
            result = await runner.call("anything", {}, 100, 100)
        assert result.status == "failed" and "no answer within 0.5 s" in result.output
        assert runner.status == "failed" and not runner.offers_tools
        runner.stop()


async def test_automatic_restarts_stop_at_the_limit(tmp_path: Path) -> None:
    runner = _runner({"command": sys.executable, "args": [str(FIXTURE)]}, tmp_path, max_restarts=1)
    async with anyio.create_task_group() as group:
        group.start_soon(runner.run)
        runner.allow()
        with anyio.fail_after(3 * WAIT):
            first = await runner.call("pid", {}, 100, 100)
            assert first.output.isdigit()
            assert "went away" in (await runner.call("crash", {}, 100, 100)).output
            second = await runner.call("pid", {}, 100, 100)  # the one restart
            assert second.output.isdigit() and second.output != first.output
            await runner.call("crash", {}, 100, 100)
            refused = await runner.call("pid", {}, 100, 100)
        assert "restarted too often" in refused.output and runner.restarts == 1
        assert not runner.offers_tools
        runner.restart()  # by the user: counts from zero again
        with anyio.fail_after(3 * WAIT):
            assert (await runner.call("pid", {}, 100, 100)).output.isdigit()
        runner.stop()


async def _until(condition: Any) -> Any:
    """Another process's state, looked at until it holds (the caller bounds the wait)."""
    while True:
        if value := condition():
            return value
        await anyio.sleep(0.02)


async def test_stopping_or_restarting_a_start_in_progress_does_not_wait_for_it(
    tmp_path: Path,
) -> None:
    from .mcp_support import mcp_processes, parent_of

    def mine() -> list[int]:
        return [pid for pid in mcp_processes("fx") if parent_of(pid) == os.getpid()]

    hangs = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
    runner = _runner(hangs, tmp_path, startup_timeout=600)
    with anyio.fail_after(2 * WAIT):  # far less than the 600 s the start could take
        async with anyio.create_task_group() as group:
            group.start_soon(runner.run)
            runner.allow()
            first = await _until(mine)
            runner.restart()  # the start in progress ends, a new one begins
            await _until(lambda: (now := mine()) and now != first)
            assert runner.status == "starting"
            runner.stop()
    assert runner.error is None  # stopped, not timed out
    assert not mine()
