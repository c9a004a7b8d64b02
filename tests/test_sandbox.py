"""The shell sandbox, through the real server and real bubblewrap: what a
command can and cannot reach, the bypasses the old word list let through,
background processes, per-command cancel, secrets, and the sandbox being
unavailable."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp

from agentls.testing.fake_model import FakeModelThread, Reply

from .lsp_support import API_KEY, AgentClient, initialize, server_config
from .support import (
    SANDBOX,
    WAIT,
    needle,
    processes_with,
    requires_sandbox,
    wait_processes,
)
from .support import tool_outputs as outputs

pytestmark = requires_sandbox


@pytest.fixture
def asked() -> list[Any]:
    return []


def _answering(client: AgentClient, asked: list[Any], answer: str) -> None:
    async def request_approval(params: Any) -> Any:
        asked.append(params)
        client.poke()
        return {"decision": answer, "reason": "not allowed in this test"}

    client.feature("agent/requestApproval")(request_approval)


@pytest_lsp.fixture(config=server_config())
async def denying(
    lsp_client: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    asked: list[Any],
    request: pytest.FixtureRequest,
) -> AsyncIterator[None]:
    """A client that denies every approval asked (and records it); options
    from ``@pytest.mark.init_options``."""
    _answering(lsp_client, asked, "deny")
    marker = request.node.get_closest_marker("init_options")
    options = marker.kwargs if marker is not None else {}
    await initialize(
        lsp_client,
        workspace,
        fake.base_url,
        experimental={"agentls": {"requestApproval": True}},
        **options,
    )
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


# --- the file system ------------------------------------------------------------------


async def test_writes_inside_the_workspace_only(
    denying: AgentClient, fake: FakeModelThread, workspace: Path, outside: Path
) -> None:
    # A name nobody else on the machine uses: the check below is that it stays absent.
    scratch = f"/tmp/agentls-sandbox-{uuid.uuid4().hex}"
    fake.script(
        Reply.tool_call(
            "exec_command",
            {
                "cmd": f"echo in > inside.txt; echo out > {outside}/written.txt; "
                f"echo made-tmp > {scratch}"
            },
        ),
        Reply.tool_call("exec_command", {"cmd": f"cat {scratch}; touch ~/in-home"}),
        Reply.text("done"),
    )
    await denying.call("agent/submit", {"prompt": "write"})
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not (outside / "written.txt").exists()
    first, second = outputs(fake)
    assert "Read-only file system" in first
    # /tmp is the pane's own: kept between its commands, invisible outside.
    assert "made-tmp" in second and not Path(scratch).exists()
    assert "Read-only file system" in second  # the home folder is read-only


async def test_the_users_tools_work(
    denying: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    script = (
        "git init -q . && git add -A && git -c user.email=a@b -c user.name=a commit -qm one "
        "&& echo change >> a.txt && git status --short && python3 -c 'print(6 * 7)' "
        "&& echo HOME=$HOME && cd /tmp && cc --version >/dev/null 2>&1; echo compiled=$?"
    )
    (workspace / "a.txt").write_text("a\n")
    fake.script(Reply.tool_call("exec_command", {"cmd": script}), Reply.text("done"))
    await denying.call("agent/submit", {"prompt": "use tools"})
    (output,) = outputs(fake)
    assert "Exit code: 0" in output, output
    assert " M a.txt" in output and "42" in output
    assert f"HOME={Path.home()}" in output
    assert (workspace / ".git").is_dir()


async def test_a_listener_on_the_hosts_loopback_is_unreachable(
    denying: AgentClient, fake: FakeModelThread
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        probe = (
            "python3 -c 'import socket,sys\n"
            "try:\n"
            f'    socket.create_connection(("127.0.0.1", {port}), timeout=2)\n'
            '    print("reached")\n'
            "except OSError as e:\n"
            '    print("unreachable", e)\''
        )
        fake.script(Reply.tool_call("exec_command", {"cmd": probe}), Reply.text("done"))
        await denying.call("agent/submit", {"prompt": "connect"})
    (output,) = outputs(fake)
    assert "unreachable" in output and "reached\n" not in output


@pytest.mark.init_options(network=True)
async def test_with_network_allowed_the_listener_is_reachable(
    denying: AgentClient, fake: FakeModelThread
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        probe = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"
        fake.script(Reply.tool_call("exec_command", {"cmd": probe + " && echo reached"}))
        fake.script(Reply.text("done"))
        await denying.call("agent/submit", {"prompt": "connect"})
    assert "reached" in outputs(fake)[0]


async def test_service_sockets_are_masked(
    fake: FakeModelThread, workspace: Path, outside: Path
) -> None:
    """A socket on a read-only file system still connects: without the
    network, the sandbox hides the ones of the user's session
    ($XDG_RUNTIME_DIR), of /run, gpg-agent, docker and ssh-agent."""
    from agentls.client.rpc import RpcClient

    runtime = outside / "runtime"
    runtime.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(runtime / "bus"))
        server.listen()
        connect = f"import socket; socket.socket(socket.AF_UNIX).connect('{runtime}/bus')"
        probe = f'python3 -c "{connect}" && echo connected || echo refused'
        fake.script(Reply.tool_call("exec_command", {"cmd": probe}), Reply.text("done"))
        config = server_config({"XDG_RUNTIME_DIR": str(runtime)})
        client = await RpcClient.spawn(config.server_command, env=config.server_env)
        await client.initialize(
            {"workspace": str(workspace), "baseUrl": fake.base_url}, str(workspace)
        )
        await asyncio.wait_for(client.call("agent/submit", {"prompt": "go"}), WAIT)
        await client.shutdown()
        # The same socket, from outside the sandbox: it does answer.
        with socket.socket(socket.AF_UNIX) as outside_probe:
            outside_probe.connect(str(runtime / "bus"))
    (output,) = outputs(fake)
    assert "refused" in output and "connected" not in output


# --- the bypasses of the old read-only word list ----------------------------------------


def _bypasses(victim: Path) -> list[tuple[str, str]]:
    """(name, command): each of them changes ``victim``'s folder if it can."""
    return [
        ("env", f"env rm -rf {victim}/dir"),
        ("process substitution", f"cat <(rm -f {victim}/file)"),
        ("sort -o", f"sort -o {victim}/file /dev/null"),
        ("rg --pre", f"rg --pre 'rm -f {victim}/file' pattern {victim}/dir/inner"),
        ("git branch -D", f"git -C {victim}/repo branch -D feature"),
        ("sed --in-place", f"sed --in-place s/keep/lost/ {victim}/file"),
        ("find -fprintf", f"find {victim}/dir -fprintf {victim}/printed '%p'"),
    ]


BYPASSES = [name for name, _ in _bypasses(Path("/"))]


@pytest.fixture
def victim(outside: Path, workspace: Path) -> Iterator[Path]:
    """A folder outside the workspace with what each bypass would destroy."""
    (outside / "dir").mkdir()
    (outside / "dir" / "inner").write_text("pattern\n")
    (outside / "file").write_text("keep\n")
    repo = outside / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    subprocess.run([*git, "branch", "feature"], check=True)
    # ripgrep runs its --pre command for each file it searches; where rg is not
    # installed, a stand-in on PATH does just that.
    if subprocess.run(["sh", "-c", "command -v rg"], capture_output=True).returncode != 0:
        bin_dir = workspace / ".bin"
        bin_dir.mkdir()
        rg = bin_dir / "rg"
        rg.write_text('#!/bin/sh\n[ "$1" = --pre ] && sh -c "$2"\nexit 0\n')
        rg.chmod(0o755)
    yield outside


def intact(victim: Path) -> None:
    assert (victim / "dir" / "inner").read_text() == "pattern\n"
    assert (victim / "file").read_text() == "keep\n"
    assert not (victim / "printed").exists()
    branches = subprocess.run(
        ["git", "-C", str(victim / "repo"), "branch", "--list", "feature"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "feature" in branches


def with_rg(command: str, workspace: Path) -> str:
    return f"PATH={workspace}/.bin:$PATH; {command}"


@pytest.mark.parametrize("name", BYPASSES)
async def test_each_bypass_is_sandboxed(
    denying: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    victim: Path,
    asked: list[Any],
    name: str,
) -> None:
    command = dict(_bypasses(victim))[name]
    fake.script(
        Reply.tool_call("exec_command", {"cmd": with_rg(command, workspace)}), Reply.text("done")
    )
    await denying.call("agent/submit", {"prompt": name})
    assert asked == [], "a sandboxed command runs without asking"
    intact(victim)


@pytest.mark.init_options(sandbox="off")
@pytest.mark.parametrize("name", BYPASSES)
async def test_without_the_sandbox_each_bypass_asks(
    denying: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    victim: Path,
    asked: list[Any],
    name: str,
) -> None:
    command = with_rg(dict(_bypasses(victim))[name], workspace)
    fake.script(Reply.tool_call("exec_command", {"cmd": command}), Reply.text("done"))
    await denying.call("agent/submit", {"prompt": name})
    assert [q["command"] for q in asked] == [command]
    intact(victim)
    assert "denied" in outputs(fake)[0]


# --- secrets ------------------------------------------------------------------------------


def find_the_key(everywhere: bool) -> str:
    """A command counting where it finds the key: its environment, its parent's
    (the server, without a sandbox), and with ``everywhere`` every
    ``/proc/*/environ`` it can see. Reversed, so that finding it is not hidden
    by the redaction of output."""
    reversed_key = API_KEY[::-1]
    where = "/proc/*/environ" if everywhere else "/proc/$PPID/environ"
    return (
        f"cat {where} 2>/dev/null | tr '\\0' '\\n' | rev | grep -c {reversed_key}; "
        f"env | rev | grep -c {reversed_key}; "
        "ls -d /proc/[0-9]* | wc -l"
    )


def key_counts(fake: FakeModelThread) -> list[int]:
    (output,) = outputs(fake)
    return [int(word) for word in output.split("Output:\n", 1)[1].split()]


@pytest.mark.parametrize(
    "everywhere",
    [
        pytest.param(True, id="sandboxed"),
        # (Not every /proc/*/environ: other servers on this machine are not ours.)
        pytest.param(
            False,
            id="unsandboxed",
            marks=pytest.mark.init_options(sandbox="off", approval="never"),
        ),
    ],
)
async def test_no_process_of_a_command_can_read_the_key(
    denying: AgentClient, fake: FakeModelThread, everywhere: bool
) -> None:
    """In the sandbox: no other process is visible. Without it: the server
    took the key out of its own environment."""
    fake.script(
        Reply.tool_call("exec_command", {"cmd": find_the_key(everywhere)}),
        Reply.text("done"),
    )
    await denying.call("agent/submit", {"prompt": "find the key"})
    found_in_proc, found_in_env, visible = key_counts(fake)
    assert (found_in_proc, found_in_env) == (0, 0)
    if everywhere:
        assert visible < 10, "the sandbox sees its own few processes only, not the server"


async def test_output_with_the_key_is_redacted_everywhere(
    denying: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    (workspace / "leak.txt").write_text(f"the key is {API_KEY}\n")
    # Printed whole, and in pieces that a stream may split anywhere.
    command = (
        f"cat leak.txt; for i in 1 2 3; do printf '{API_KEY[:9]}'; sleep 0.05; "
        f"printf '{API_KEY[9:]}\\n'; done"
    )
    fake.script(
        Reply.tool_call("exec_command", {"cmd": command}),
        Reply.tool_call("read_file", {"path": "leak.txt"}),
        Reply.text("done"),
    )
    await denying.call("agent/submit", {"prompt": "leak"})
    to_model = "".join(outputs(fake))
    to_editor = "".join(e["text"] for e in denying.events if e["kind"] == "tool.output")
    assert to_model.count("[redacted]") == 5 and to_editor.count("[redacted]") == 4
    for text in (to_model, to_editor):
        assert API_KEY not in text and API_KEY[9:] not in text


# --- background processes and per-command cancel -----------------------------------------


async def test_a_background_server_is_used_by_the_next_call_and_dies_with_the_cancel(
    denying: AgentClient, fake: FakeModelThread
) -> None:
    tag = needle().replace(".", "")
    server = f"exec -a server-{tag} python3 -m http.server 8765 --bind 127.0.0.1"
    fetch = (
        "for i in $(seq 100); do python3 -c 'import urllib.request; "
        'print(urllib.request.urlopen("http://127.0.0.1:8765/").status)\' 2>/dev/null && break; '
        "sleep 0.05; done"
    )
    fake.script(
        Reply.tool_call("start_process", {"cmd": server}, call_id="c-start"),
        Reply.tool_call("exec_command", {"cmd": fetch}, call_id="c-fetch"),
        Reply.tool_call("read_process_output", {"process_id": "p1"}, call_id="c-read"),
        Reply.tool_call("exec_command", {"cmd": f"sleep {tag[:3]}.{tag[3:]}"}, call_id="c-wait"),
    )
    msg_id, future = denying.request("agent/submit", {"prompt": "serve"})
    await wait_processes(f"sleep\0{tag[:3]}.{tag[3:]}", 1)
    assert len(processes_with(f"server-{tag}")) == 1
    listed = await denying.call("agent/processes", {})
    (entry,) = listed["processes"]
    assert entry["processId"] == "p1" and entry["running"] is True
    assert entry["command"] == server and "T" in entry["startedAt"]
    body = fake.requests[-1].body["input"]
    results = {i["call_id"]: i["output"] for i in body if i["type"] == "function_call_output"}
    assert "200" in results["c-fetch"], results["c-fetch"]
    assert '"GET / HTTP/1.1" 200' in results["c-read"]
    denying.cancel(msg_id)
    result = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    assert result["status"] == "cancelled"
    assert result["receipt"]["killedProcesses"] >= 2
    assert not processes_with(f"server-{tag}") and not processes_with(f"{tag[:3]}.{tag[3:]}")
    (entry,) = (await denying.call("agent/processes", {}))["processes"]
    assert entry["running"] is False


async def test_background_processes_die_with_the_pane(
    denying: AgentClient, fake: FakeModelThread
) -> None:
    duration = needle()
    fake.script(
        Reply.tool_call("start_process", {"cmd": f"sleep {duration}"}),
        Reply.text("started"),
    )
    await denying.call("agent/submit", {"prompt": "start"})
    await wait_processes(duration, 1)
    # It outlives the turn that started it...
    assert (await denying.call("agent/processes", {}))["processes"][0]["running"]
    await denying.call("agent/newSession", {})
    # ...not the session: gone by the time newSession answered.
    assert not processes_with(duration)
    assert (await denying.call("agent/processes", {}))["processes"] == []


async def test_cancel_tool_stops_one_command_and_the_turn_goes_on(
    denying: AgentClient, fake: FakeModelThread
) -> None:
    duration = needle()
    command = f"echo before; sleep {duration} & sh -c 'sleep {duration}' & wait"
    fake.script(
        Reply.tool_call("exec_command", {"cmd": command}, call_id="c-long"),
        Reply.text("went on"),
    )
    _, future = denying.request("agent/submit", {"prompt": "long"})
    await wait_processes(duration, 2)
    await denying.event("tool.output", lambda e: "before" in e["text"])
    answer = await denying.call("agent/cancelTool", {"callId": "c-long"})
    assert answer["cancelled"] is True and answer["killedProcesses"] >= 3
    assert not processes_with(duration), "dead when cancelTool answered"
    result = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    assert result["status"] == "completed" and result["finalMessage"] == "went on"
    (output,) = outputs(fake)
    assert output.startswith("Cancelled by the user") and "before" in output
    finished = await denying.event("tool.finished", lambda e: e["callId"] == "c-long")
    assert finished["status"] == "cancelled"
    assert await denying.call("agent/cancelTool", {"callId": "c-long"}) == {
        "cancelled": False,
        "killedProcesses": 0,
    }


# --- the sandbox unavailable ------------------------------------------------------------------


_FAKES = Path(tempfile.mkdtemp(prefix="agentls-fake-bwrap-"))
_FAILING_BWRAP = _FAKES / "bwrap"
_FAILING_BWRAP.write_text(
    "#!/bin/sh\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n"
)
_FAILING_BWRAP.chmod(0o755)
UNAVAILABLE = {
    "missing": (_FAKES / "not-installed", "does not exist"),
    "no-user-namespaces": (_FAILING_BWRAP, "No permissions to create a new namespace"),
}


async def _unsandboxed(
    client: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    asked: list[Any],
) -> AsyncIterator[None]:
    async def request_approval(params: Any) -> Any:
        asked.append(params)
        return {"decision": "allow"}

    client.feature("agent/requestApproval")(request_approval)
    await initialize(
        client, workspace, fake.base_url, experimental={"agentls": {"requestApproval": True}}
    )
    yield
    if not client.stopped:
        await client.shutdown_session()


@pytest_lsp.fixture(config=server_config({"AGENTLS_BWRAP": str(UNAVAILABLE["missing"][0])}))
async def no_bwrap(
    lsp_client: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    asked: list[Any],
) -> AsyncIterator[None]:
    """A server without bubblewrap."""
    async for _ in _unsandboxed(lsp_client, fake, workspace, asked):
        yield


@pytest_lsp.fixture(
    config=server_config({"AGENTLS_BWRAP": str(UNAVAILABLE["no-user-namespaces"][0])})
)
async def no_userns(
    lsp_client: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    asked: list[Any],
) -> AsyncIterator[None]:
    """A server whose bubblewrap cannot make namespaces (user namespaces disabled)."""
    async for _ in _unsandboxed(lsp_client, fake, workspace, asked):
        yield


async def _commands_run_unsandboxed_and_ask(
    client: AgentClient,
    fake: FakeModelThread,
    outside: Path,
    asked: list[Any],
    reason: str,
) -> None:
    fake.script(
        Reply.tool_call("exec_command", {"cmd": f"touch {outside}/made"}),
        Reply.tool_call("exec_command", {"cmd": "echo second"}),
        Reply.text("done"),
    )
    result = await client.call("agent/submit", {"prompt": "go"})
    assert result["status"] == "completed"
    # Every command asked (allowed here) and ran unsandboxed: outside is writable.
    assert [q["command"] for q in asked] == [f"touch {outside}/made", "echo second"]
    assert (outside / "made").exists()
    # Said once, and why.
    if not client.messages:
        await asyncio.wait_for(client.wait_for_notification(lsp.WINDOW_SHOW_MESSAGE), WAIT)
    (message,) = client.messages
    assert "cannot be sandboxed" in message.message and reason in message.message


async def test_without_bubblewrap_commands_run_unsandboxed_and_ask(
    no_bwrap: AgentClient,
    fake: FakeModelThread,
    outside: Path,
    asked: list[Any],
) -> None:
    reason = UNAVAILABLE["missing"][1]
    await _commands_run_unsandboxed_and_ask(no_bwrap, fake, outside, asked, reason)


async def test_without_user_namespaces_commands_run_unsandboxed_and_ask(
    no_userns: AgentClient,
    fake: FakeModelThread,
    outside: Path,
    asked: list[Any],
) -> None:
    reason = UNAVAILABLE["no-user-namespaces"][1]
    await _commands_run_unsandboxed_and_ask(no_userns, fake, outside, asked, reason)


def _system_python() -> str | None:
    """A Python of this version that an ordinary user can run (ours may live
    in root's home folder)."""
    name = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for folder in ("/usr/bin", "/usr/local/bin"):
        candidate = Path(folder) / name
        if candidate.is_file():
            return str(candidate)
    return None


def _private_folder(paths: list[str]) -> Path | None:
    """The first folder above one of ``paths`` that other users cannot enter
    (a checkout in ``mktemp -d``, a home folder of mode 0700)."""
    for path in paths:
        for folder in [Path(path), *Path(path).parents]:
            if folder.exists() and not folder.stat().st_mode & 0o001:
                return folder
    return None


_AS_NOBODY = """
import anyio, sys
from pathlib import Path
from agentls.config import SandboxPolicy, ToolConfig
from agentls.tools.base import ToolContext
from agentls.tools.exec_command import ExecCommand
from agentls.tools.processes import ProcessScope
from agentls.tools.shell import Shell
from agentls.tools.workspace import Workspace

async def main():
    ws = Path(sys.argv[1])
    async with anyio.create_task_group() as group:
        shell = Shell(group, ws, SandboxPolicy(), ToolConfig())
        assert (await shell.state()).active, "no sandbox"
        ctx = ToolContext(Workspace(ws), ToolConfig(), ProcessScope(),
                          lambda t: None, lambda *a: None, shell=shell)
        cmd = "id -u; touch made; touch /etc/nope; ls -d /proc/[0-9]* | wc -l"
        print((await ExecCommand().run({"cmd": cmd}, ctx)).output)
        await shell.close()
        group.cancel_scope.cancel()

anyio.run(main)
"""


def test_the_sandbox_works_for_an_ordinary_user(outside: Path) -> None:
    """As root here (CI), take the path of a user without privileges too:
    bubblewrap makes a user namespace itself. The user is `nobody`."""
    import os
    import pwd
    import site

    if os.geteuid() != 0:
        pytest.skip("already an ordinary user: every other test here takes that path")
    python = _system_python()
    if python is None:
        pytest.skip(f"no system python{sys.version_info[0]}.{sys.version_info[1]} for 'nobody'")
    nobody = pwd.getpwnam("nobody")
    outside.chmod(0o755)
    workspace = outside / "ws"
    workspace.mkdir()
    os.chown(workspace, nobody.pw_uid, nobody.pw_gid)
    code = Path(__file__).resolve().parents[1] / "server"
    private = _private_folder([str(code), *site.getsitepackages()])
    if private is not None:
        pytest.skip(f"'nobody' cannot enter {private}, where the code or its packages are")
    path = os.pathsep.join([str(code), *site.getsitepackages()])
    env = {"PATH": os.environ["PATH"], "HOME": str(workspace), "PYTHONPATH": path}
    runner = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    done = subprocess.run(
        [*runner, python, "-c", _AS_NOBODY, str(workspace)],
        capture_output=True,
        text=True,
        env=env,
        cwd=workspace,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("Output:\n", 1)[1].splitlines()
    assert lines[0] == str(nobody.pw_uid)
    assert "Read-only file system" in lines[1] and int(lines[2]) < 10
    assert (workspace / "made").exists()
    assert (workspace / "made").stat().st_uid == nobody.pw_uid


def test_sandbox_flag_matches_the_machine() -> None:
    # Documented: `make test` installs bubblewrap, so there every test here runs.
    assert SANDBOX
