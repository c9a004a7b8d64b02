"""An editor that stops reading never freezes the server.

The real server on real pipes, driven by a raw editor that can stop reading
its stdout: a flood of deltas on main fills the pipe, and meanwhile a command
on a fork is cancelled. The cancel must still kill the command while the
editor is not reading (with a blocking write on the event loop it could not:
the loop would be stuck in ``write``); once the editor reads again, every
message arrives, in order. An editor that stays away past the bound on unsent
output is given up on in order; an ``exit`` sent while it is not reading still
gets everything queued before it written out.
"""

from __future__ import annotations

import array
import fcntl
import os
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentls.testing.fake_model import FakeModelThread, Reply

from .fuzz.harness import EXIT_WAIT, SERVER, START_WAIT, RawServer, initialize
from .support import WAIT, kill_quietly, needle, pid_alive, processes_with

# 20,000 distinct deltas, 1.3 MB of text: twenty times what the pipe holds.
PIECES = [
    f"{i:06d}:" + "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuv"
    for i in range(20_000)
]
FLOOD = "".join(PIECES)


class SlowEditor(RawServer):
    """A raw editor whose reading can be stopped, keeping every message it
    reads in arrival order."""

    def __init__(self, base_url: str, workspace: Path, *, env: dict[str, str] | None = None):
        self.reading = threading.Event()
        self.reading.set()
        self.parked = threading.Event()  # the reader waits for ``reading``
        self.messages: list[dict[str, Any]] = []
        super().__init__(base_url, workspace, env=env)

    def _read_headers(self, out: Any) -> int | None:
        # Only ever between two messages; the server's output stays in the pipe.
        if not self.reading.is_set():
            self.parked.set()
            self.reading.wait()
            self.parked.clear()
        return super()._read_headers(out)

    def _dispatch(self, message: Any) -> None:
        with self._cond:
            self.messages.append(message)
        super()._dispatch(message)

    @contextmanager
    def not_reading(self) -> Iterator[None]:
        self.reading.clear()
        try:
            yield
        finally:
            self.reading.set()

    def unread(self) -> int:
        """Bytes the server wrote that are still in the pipe."""
        assert self.proc.stdout is not None
        count = array.array("i", [0])
        fcntl.ioctl(self.proc.stdout.fileno(), termios.FIONREAD, count)
        return count[0]

    def pipe_size(self) -> int:
        assert self.proc.stdout is not None
        return fcntl.fcntl(self.proc.stdout.fileno(), fcntl.F_GETPIPE_SZ)

    def events(self, pane: str) -> list[dict[str, Any]]:
        return [
            m["params"]
            for m in self.messages
            if m.get("method") == "agent/event" and m["params"]["pane"] == pane
        ]

    def text(self, pane: str, kind: str) -> str:
        """The text of the pane's events of this kind, joined."""
        return "".join(e["text"] for e in self.events(pane) if e["kind"] == kind)

    def index(self, predicate: Callable[[dict[str, Any]], bool]) -> int:
        return next(i for i, m in enumerate(self.messages) if predicate(m))


def poll(condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    """Wait until ``condition()`` holds (checked every 10 ms)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout:.0f} s")
        time.sleep(0.01)


def response_to(msg_id: int) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m.get("id") == msg_id and "method" not in m


def turn_finished(pane: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: (
        m.get("method") == "agent/event"
        and m["params"]["pane"] == pane
        and m["params"]["kind"] == "turn.finished"
    )


def assert_contiguous(editor: SlowEditor, pane: str) -> None:
    seqs = [event["seq"] for event in editor.events(pane)]
    assert seqs == list(range(1, len(seqs) + 1)), f"{pane}: seq {seqs}"


@contextmanager
def slow_editor(
    fake: FakeModelThread, workspace: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[SlowEditor, int]]:
    """An initialized server with a fork running ``sleep 300``: (editor, sleep's
    real pid — found by its unique duration, in the sandbox or not)."""
    duration = needle()
    sleeper = f"sleep {duration} & wait"
    fake.script(Reply.tool_call("exec_command", {"cmd": sleeper}), Reply.text(FLOOD, chunks=PIECES))
    editor = SlowEditor(fake.base_url, workspace, env=env)
    pids: list[int] = []
    try:
        initialize(editor)
        assert editor.call("agent/fork", {})["result"]["pane"] == "fork-1"
        editor.request("agent/submit", {"pane": "fork-1", "prompt": "sleep"}, msg_id=100)

        poll(lambda: bool(processes_with(f"sleep\0{duration}")), "the command's sleep")
        pids.extend(processes_with(f"sleep\0{duration}"))
        assert len(pids) == 1 and pid_alive(pids[0])
        yield editor, pids[0]
    finally:
        editor.reading.set()
        editor.stop(kill=True)
        kill_quietly(pids)


def flood_until_the_pipe_is_full(editor: SlowEditor) -> None:
    """Submit the flood on main (the editor not reading) and wait until its
    output has filled the pipe: a blocking writer would now be stuck."""
    editor.request("agent/submit", {"pane": "main", "prompt": "flood"}, msg_id=200)
    # Full, give or take the pages the editor's last read left partly used.
    poll(
        lambda: editor.parked.is_set() and editor.unread() >= editor.pipe_size() - 16 * 1024,
        "full pipe",
    )


def test_a_cancel_kills_the_command_while_the_editor_is_not_reading(
    fake: FakeModelThread, workspace: Path
) -> None:
    with slow_editor(fake, workspace) as (editor, pid):
        with editor.not_reading():
            flood_until_the_pipe_is_full(editor)
            read_before = len(editor.messages)
            editor.request("agent/cancel", {"pane": "fork-1"}, msg_id=300)
            poll(lambda: not pid_alive(pid), f"kill of sleep (pid {pid}) after the cancel")
            assert len(editor.messages) == read_before, "the editor was meant not to read"
            assert editor.unread() >= editor.pipe_size() - 16 * 1024

        # Reading again: everything comes, in order.
        editor.wait_until(
            lambda: all(editor.responses(i) for i in (100, 200, 300)), "the three responses"
        )
        cancel = editor.responses(300)[0]["result"]
        assert cancel["cancelled"] == 1
        (receipt,) = cancel["receipts"]
        assert receipt["abortedToolCalls"][0]["tool"] == "exec_command"
        assert receipt["killedProcesses"] >= 1 and receipt["survivingProcesses"] == 0
        fork_result = editor.responses(100)[0]["result"]
        assert fork_result["status"] == "cancelled" and fork_result["receipt"] == receipt
        main_result = editor.responses(200)[0]["result"]
        assert main_result["status"] == "completed" and main_result["finalMessage"] == FLOOD

        assert_contiguous(editor, "main")
        assert_contiguous(editor, "fork-1")
        text = editor.text("main", "message.delta")
        assert text == FLOOD  # no delta lost, none out of place
        # Answers come after the turns they are about.
        assert editor.index(turn_finished("fork-1")) < editor.index(response_to(100))
        assert editor.index(turn_finished("fork-1")) < editor.index(response_to(300))
        assert editor.index(turn_finished("main")) < editor.index(response_to(200))

        assert editor.call("shutdown")["result"] is None
        editor.notify("exit")
        assert editor.wait_exit() == 0
        editor.wait_until(lambda: editor.got.eof, "end of output")
        assert not editor.got.violations


def test_exit_while_the_editor_is_not_reading_still_sends_everything(
    fake: FakeModelThread, workspace: Path
) -> None:
    with slow_editor(fake, workspace) as (editor, pid):
        with editor.not_reading():
            flood_until_the_pipe_is_full(editor)
            editor.request("shutdown", None, msg_id=400)
            editor.notify("exit")
        # Read only now: the server must still be writing what it queued.
        assert editor.wait_exit() == 0
        editor.wait_until(lambda: editor.got.eof, "end of output")
        assert not pid_alive(pid)
        assert not editor.got.violations
        assert editor.responses(400)[0]["result"] is None
        for msg_id, pane in ((100, "fork-1"), (200, "main")):
            (response,) = editor.responses(msg_id)
            assert response["result"]["status"] in ("completed", "cancelled")
            assert editor.index(turn_finished(pane)) < editor.index(response_to(msg_id))
            assert_contiguous(editor, pane)
        text = editor.text("main", "message.delta")
        assert FLOOD.startswith(text)
        # shutdown is answered once every turn has stopped and been reported.
        assert editor.index(response_to(200)) < editor.index(response_to(400))


def test_an_editor_that_never_reads_again_is_given_up_in_order(
    fake: FakeModelThread, workspace: Path
) -> None:
    env = {"AGENTLS_UNSENT_LIMIT": str(256 * 1024)}  # the flood is five times that
    with slow_editor(fake, workspace, env) as (editor, pid):
        with editor.not_reading():
            editor.request("agent/submit", {"pane": "main", "prompt": "flood"}, msg_id=200)
            # Past the bound the server stops the session as if the editor had
            # gone: the command is killed and the process exits, all on its own.
            code = editor.wait_exit(EXIT_WAIT)
            assert not pid_alive(pid)
        assert code == 1
        stderr = editor.stderr_text()
        assert "the editor has not read the last" in stderr, stderr
        assert "were not sent" in stderr, stderr
        # What the editor reads now is the stream as it was, up to where it
        # stopped: in order, no gap (the process may have died mid-message).
        editor.wait_until(lambda: editor.got.eof, "end of output")
        assert all("ended inside a body" in v for v in editor.got.violations)
        assert_contiguous(editor, "main")
        assert_contiguous(editor, "fork-1")
        text = editor.text("main", "message.delta")
        assert FLOOD.startswith(text)


def test_a_limit_that_is_not_a_number_of_bytes_is_refused() -> None:
    env = {**os.environ, "AGENTLS_UNSENT_LIMIT": "64M"}
    done = subprocess.run(
        SERVER, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=START_WAIT
    )
    assert done.returncode == 2
    assert "AGENTLS_UNSENT_LIMIT='64M': expected a positive number of bytes" in done.stderr.decode()
