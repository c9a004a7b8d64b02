from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp

from agentls.testing.fake_model import FakeModelThread, run_in_thread

from .lsp_support import AgentClient, initialize, server_config

# Tools run `bash -lc`, which reads the user's login profile. The tests must not
# depend on this machine's dotfiles (here, one that runs `pyenv rehash` behind a
# global lock in every login shell), so they run with a HOME of their own. The
# caches of installed tools stay where they are.
_REAL_HOME = Path.home()
os.environ.setdefault("AGENTLS_E2E_CACHE", str(_REAL_HOME / ".cache" / "agentls-e2e"))
os.environ.setdefault("AGENTLS_BENCH_CACHE", str(_REAL_HOME / ".cache" / "agentls-bench"))
os.environ["HOME"] = tempfile.mkdtemp(prefix="agentls-tests-home-")


@pytest.fixture
def fake() -> Iterator[FakeModelThread]:
    """The fake model on its own thread and loop (pytest-lsp fixtures cannot
    depend on async fixtures)."""
    with run_in_thread() as model:
        yield model


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest_lsp.fixture(config=server_config())
async def client(
    lsp_client: AgentClient, fake: FakeModelThread, workspace: Path, request: pytest.FixtureRequest
) -> AsyncIterator[None]:
    """The real server, initialized on a temporary workspace and the fake model
    (``@pytest.mark.init_options(...)`` adds initializationOptions)."""
    marker = request.node.get_closest_marker("init_options")
    options = marker.kwargs if marker is not None else {}
    lsp_client.init_result = await initialize(lsp_client, workspace, fake.base_url, **options)
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()
    # Everything the server sent was what the wire schema says.
    assert not lsp_client.wire_problems, lsp_client.wire_problems


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace that commands must not be able to
    write. Not under /tmp: inside the sandbox /tmp is the pane's own."""
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    folder = Path(tempfile.mkdtemp(prefix="agentls-outside-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
