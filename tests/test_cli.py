"""The command line: ``agentls exec`` (a headless client of the server) and
``agentls demo``, run as real processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, needle, processes_with

AGENTLS = [sys.executable, "-m", "agentls"]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(extra)
    return env


async def run(
    *args: str, env: dict[str, str], cwd: Path, timeout: float = 60
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *AGENTLS,
        *args,
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_exec_without_a_model_says_what_to_set(tmp_path: Path) -> None:
    code, _, err = await run("exec", "hello", env=clean_env(), cwd=tmp_path)
    assert code == 2
    assert "OPENAI_API_KEY" in err and "OPENAI_BASE_URL" in err


async def test_exec_streams_the_answer(tmp_path: Path) -> None:
    async with FakeModel() as fake:
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "echo from-the-tool"}),
            Reply.text("All good here."),
        )
        code, out, err = await run(
            "exec", "check", "things", env=clean_env(OPENAI_BASE_URL=fake.base_url), cwd=tmp_path
        )
    assert code == 0, err
    assert out.strip() == "All good here."
    assert "Running `echo from-the-tool`" in err and "from-the-tool" in err
    assert fake.requests[0].body["input"][0]["content"][0]["text"] == "check things"


async def test_exec_ctrl_c_cancels_the_turn_and_kills_its_processes(tmp_path: Path) -> None:
    duration = needle()
    async with FakeModel() as fake:
        fake.script(
            Reply.tool_call("exec_command", {"cmd": f"sleep {duration} & echo started; wait"})
        )
        process = await asyncio.create_subprocess_exec(
            *AGENTLS,
            "exec",
            "sleep please",
            env=clean_env(OPENAI_BASE_URL=fake.base_url),
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stderr is not None
        seen = ""
        async with asyncio.timeout(WAIT * 3):
            while "│ started" not in seen:  # the command's output, not its title
                line = await process.stderr.readline()
                assert line, f"exec ended early: {seen}"
                seen += line.decode()
        assert processes_with(duration)
        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), WAIT * 3)
    assert process.returncode == 130
    assert "cancelled" in err.decode() and "processes killed: " in err.decode()
    assert not processes_with(duration)


async def test_demo_runs_a_scripted_session(tmp_path: Path) -> None:
    code, out, err = await run("demo", env=clean_env(), cwd=tmp_path, timeout=120)
    assert code == 0, out + err
    assert "SCRIPTED model" in out
    assert "+    return (ordered[middle - 1] + ordered[middle]) / 2" in out
    assert "OK" in out and "— done" in out


async def test_exec_without_a_terminal_refuses_what_needs_asking(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    async with FakeModel() as fake:
        fake.script(
            Reply.tool_call(
                "exec_command",
                {"cmd": f"touch {outside}", "escalate": True, "justification": "needed"},
            ),
            Reply.text("could not"),
        )
        code, _out, err = await run(
            "exec", "write outside", env=clean_env(OPENAI_BASE_URL=fake.base_url), cwd=tmp_path
        )
    assert code == 0, err
    assert not outside.exists()
    assert "not allowed" in err and "--sandbox off --approval never" in err
    output = fake.requests[1].body["input"][-1]["output"]
    assert "no terminal to ask" in output and "--approval never" in output


async def test_exec_asks_on_its_terminal(tmp_path: Path) -> None:
    """stdin a terminal (a pseudo-terminal here): the question is shown with
    the command and why, and the answer typed there decides."""
    import pty

    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    controller, terminal = pty.openpty()
    try:
        async with FakeModel() as fake:
            fake.script(
                Reply.tool_call(
                    "exec_command",
                    {"cmd": f"touch {outside}", "escalate": True, "justification": "it goes there"},
                ),
                Reply.tool_call("exec_command", {"cmd": f"rm {outside}", "escalate": True}),
                Reply.text("asked twice"),
            )
            process = await asyncio.create_subprocess_exec(
                *AGENTLS,
                "exec",
                "write outside",
                env=clean_env(OPENAI_BASE_URL=fake.base_url),
                cwd=tmp_path,
                stdin=terminal,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            assert process.stderr is not None
            seen = ""
            for answer in (b"y\n", b"n: keep it\n"):
                async with asyncio.timeout(WAIT * 3):
                    while seen.count("Allow?") < (1 if answer == b"y\n" else 2):
                        seen += (await process.stderr.read(256)).decode()
                os.write(controller, answer)
            _out, rest = await asyncio.wait_for(process.communicate(), WAIT * 3)
            seen += rest.decode()
    finally:
        os.close(controller)
        os.close(terminal)
    assert process.returncode == 0, seen
    assert f"$ touch {outside}" in seen and "why: it goes there" in seen
    assert outside.exists(), "allowed once: it ran outside the sandbox"
    denied = fake.requests[2].body["input"][-1]["output"]
    assert "denied" in denied and "keep it" in denied
    outside.unlink()


async def test_exec_shows_the_context_meter_and_compactions(tmp_path: Path) -> None:
    too_long = Reply.http_error(400, message="Too long.", code="context_length_exceeded")
    async with FakeModel(too_long, Reply.text("Summary."), Reply.text("Answer.")) as fake:
        code, out, err = await run(
            "exec", "hello", env=clean_env(OPENAI_BASE_URL=fake.base_url), cwd=tmp_path
        )
    assert code == 0, err
    assert out.strip() == "Answer."
    assert "⟳ compacting the conversation…" in err
    assert "(summary)" in err and "⟳ context compacted:" in err
    assert "of 272k (" in err  # the meter: the default model's window


async def test_exec_resume_and_sessions_continue_list_and_delete(tmp_path: Path) -> None:
    env = clean_env(AGENTLS_STATE_DIR=str(tmp_path / "state"))
    work = tmp_path / "project"
    work.mkdir()
    async with FakeModel() as fake:
        env["OPENAI_BASE_URL"] = fake.base_url
        fake.script(Reply.text("The answer is 42."), Reply.text("Still 42."))
        code, out, err = await run("exec", "what is the answer?", env=env, cwd=work)
        assert code == 0, err
        assert "— session " in err and "--resume" in err
        code, listing, _ = await run("sessions", env=env, cwd=work)
        assert code == 0 and "what is the answer?" in listing and "1  what" in listing
        code, out, err = await run("exec", "--resume", "and", "why?", env=env, cwd=work)
        assert code == 0, err
        assert out.strip() == "Still 42."
        assert "↺ resumed “what is the answer?” · 1 turns" in err
        inputs = fake.requests[1].body["input"]
        assert [part["text"] for item in inputs for part in item["content"]] == [
            "what is the answer?",
            "The answer is 42.",
            "and why?",
        ]
        code, listed, _ = await run("sessions", "--json", env=env, cwd=work)
        (session,) = json.loads(listed)
        assert session["turns"] == 2
        code, _, err = await run("exec", "--resume", "0123456789ab", "hi", env=env, cwd=work)
        assert code == 2 and "no session '0123456789ab'" in err
        code, _, err = await run("sessions", "delete", session["sessionId"][:8], env=env, cwd=work)
        assert code == 0 and "deleted" in err
        code, listed, err = await run("sessions", env=env, cwd=work)
        assert code == 0 and listed == "" and "no sessions" in err
        code, _, err = await run("exec", "--resume", "hi", env=env, cwd=work)
        assert code == 2 and "no stored session" in err
    assert len(fake.requests) == 2
