"""The system prompt and the project's own instructions (AGENTS.md): global,
then repository root down to the workspace, each under its path, 32 KiB at
most; read when a session starts and after a compaction."""

from __future__ import annotations

import datetime
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
import pytest_lsp

from agentls.agent import instructions, project_docs
from agentls.agent.settings import SettingChange
from agentls.testing.fake_model import FakeModel, FakeModelThread, Reply

from .lsp_support import AgentClient, initialize, server_config
from .support import WAIT, running_agent


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with instructions at its root and in ``pkg``; the
    workspace is ``pkg/sub`` (which has none of its own)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Use tabs.\n")
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "AGENTS.md").write_text("Run `make check` before you finish.\n")
    return root


def env_for(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config"
    (config / "agentls").mkdir(parents=True)
    (config / "agentls" / "AGENTS.md").write_text("Answer in English.\n")
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(config)}


def test_global_then_root_down_to_the_workspace(repo: Path, tmp_path: Path) -> None:
    docs = project_docs.load(repo / "pkg" / "sub", env_for(tmp_path))
    assert [f.path for f in docs.files] == [
        str(tmp_path / "config" / "agentls" / "AGENTS.md"),
        "AGENTS.md",
        "pkg/AGENTS.md",
    ]
    text = docs.text
    assert text.index("Answer in English.") < text.index("Use tabs.") < text.index("make check")
    assert "## pkg/AGENTS.md\n\nRun `make check`" in text
    assert docs.cut == 0 and docs.total_bytes == sum(f.bytes for f in docs.files)


def test_the_global_file_is_shown_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "agentls").mkdir(parents=True)
    (home / ".config" / "agentls" / "AGENTS.md").write_text("Be brief.\n")
    workspace = tmp_path / "plain"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("No repository here.\n")
    docs = project_docs.load(workspace, {"HOME": str(home)})
    assert [f.path for f in docs.files] == ["~/.config/agentls/AGENTS.md", "AGENTS.md"]


def test_at_most_32_kib_and_the_cut_is_said(repo: Path) -> None:
    (repo / "pkg" / "AGENTS.md").write_text("rule\n" * 10_000)
    docs = project_docs.load(repo / "pkg", {"HOME": str(repo / "nohome")})
    assert docs.cut > 0
    kept, _, note = docs.text.rpartition("\n\n[… ")
    assert len(kept.encode()) <= project_docs.MAX_BYTES and kept.startswith("## AGENTS.md")
    assert f"the last {docs.cut} bytes of the project instructions were cut" in note


def test_the_system_prompt_says_what_a_careful_agent_needs(repo: Path) -> None:
    env = instructions.Environment.here(repo)
    docs = project_docs.load(repo, {"HOME": str(repo / "nohome")})
    text = instructions.build(env, instructions.Policy("on-request"), docs)
    assert f"Workspace: {repo}" in text
    assert datetime.date.today().isoformat() in text
    assert "bash -lc" in text and env.os_name in text
    assert "Approval (on-request)" in text and "Sandbox: none" in text
    assert "*** Begin Patch" in text and "never absolute" in text
    assert "git reset --hard" in text and "Do not commit" in text
    assert "# Project instructions" in text and "## AGENTS.md\n\nUse tabs." in text
    sandboxed = instructions.Policy("on-request", sandboxed=True, writable=True, network=False)
    sandbox_line, approval_line = instructions.policy_lines(sandboxed)
    assert "Sandbox: commands can write inside the workspace and /tmp." in sandbox_line
    assert "They have no network access." in sandbox_line
    assert "escalate: true" in approval_line


async def test_requests_carry_them_and_follow_the_policy(repo: Path) -> None:
    async with (
        FakeModel(Reply.text("one"), Reply.text("two")) as fake,
        running_agent(fake.base_url, repo) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("hi")
            agent.change_setting(SettingChange("approval", "always"))
            await agent.prompt("again")
    first, second = (r.body["instructions"] for r in fake.requests)
    assert "## AGENTS.md\n\nUse tabs." in first and "Approval (on-request)" in first
    assert "Approval (always)" in second


async def test_read_again_after_a_compaction(repo: Path) -> None:
    async with (
        FakeModel(Reply.text("one"), Reply.text("Summary."), Reply.text("two")) as fake,
        running_agent(fake.base_url, repo) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("hi")
            (repo / "AGENTS.md").write_text("Use spaces now.\n")
            await agent.compact().result()
            await agent.prompt("again")
    assert "Use tabs." in fake.requests[0].body["instructions"]
    assert "Use spaces now." in fake.requests[2].body["instructions"]


@pytest_lsp.fixture(
    config=server_config({"XDG_CONFIG_HOME": str(Path(os.environ["HOME"]) / "xdg-instructions")})
)
async def instructed(
    lsp_client: AgentClient, fake: FakeModelThread, repo: Path
) -> AsyncIterator[None]:
    global_file = Path(os.environ["HOME"]) / "xdg-instructions" / "agentls" / "AGENTS.md"
    global_file.parent.mkdir(parents=True, exist_ok=True)
    global_file.write_text("Global rule.\n" * 40)
    await initialize(lsp_client, repo / "pkg", fake.base_url)
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


async def test_agent_instructions_lists_the_files(instructed: AgentClient, repo: Path) -> None:
    result = await instructed.call("agent/instructions", {})
    paths = [f["path"] for f in result["files"]]
    assert paths[1:] == ["AGENTS.md", "pkg/AGENTS.md"] and paths[0].endswith("agentls/AGENTS.md")
    assert result["bytes"] == 13 * 40 + len("Use tabs.\n") + len(
        "Run `make check` before you finish.\n"
    )
    assert result["cutBytes"] == 0
    # A new session reads them again.
    (repo / "pkg" / "AGENTS.md").unlink()
    await instructed.call("agent/newSession", {})
    again = await instructed.call("agent/instructions", {})
    assert [f["path"] for f in again["files"]][1:] == ["AGENTS.md"]
