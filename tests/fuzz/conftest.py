"""Fuzzing the JSON-RPC surface of the real server (see tests/fuzz/test_*.py).

Two sizes, chosen by ``AGENTLS_FUZZ``: ``small`` (default, a few hundred
cases, part of ``make test``) and ``long`` (at least 5,000 cases)::

    .venv/bin/pytest tests/fuzz                          # small
    AGENTLS_FUZZ=long .venv/bin/pytest tests/fuzz     # long (minutes)
    AGENTLS_FUZZ_SEED=7 .venv/bin/pytest tests/fuzz   # other inputs than CI's

Both are derandomized (no example database either), so a run is reproducible;
``AGENTLS_FUZZ_SEED`` explores other inputs. The number of cases each test
ran is printed at the end. Defects found are strict xfails in test_defects.py.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.testing.fake_model import FakeModelThread, Reply, run_in_thread

from .harness import CASE_SECONDS, CASES, DURATIONS, SERVER_RSS_KIB, Live, Uninitialized


@pytest.fixture(scope="session")
def fuzz_fake() -> Iterator[FakeModelThread]:
    """The fake model: every request is answered "ok" at once."""
    with run_in_thread() as model:
        model.on_request(lambda _request: Reply.text("ok"))
        yield model


@pytest.fixture(scope="session")
def fuzz_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-ws")
    (root / "stats.py").write_text("def median(values):\n    return sorted(values)[0]\n")
    return root


@pytest.fixture(scope="session")
def live(fuzz_fake: FakeModelThread, fuzz_workspace: Path) -> Iterator[Live]:
    """One initialized server shared by every example that does not end it."""
    shared = Live(fuzz_fake, fuzz_workspace)
    yield shared
    shared.discard(kill=False)


@pytest.fixture(scope="module")
def uninitialized(fuzz_fake: FakeModelThread, fuzz_workspace: Path) -> Iterator[Uninitialized]:
    """A server not yet initialized, shared until an example initializes it."""
    holder = Uninitialized(fuzz_fake, fuzz_workspace)
    yield holder
    holder.discard()


@pytest.fixture(autouse=True)
def _time_fuzz_test(request: pytest.FixtureRequest) -> Iterator[None]:
    start = time.monotonic()
    yield
    name = request.node.name
    DURATIONS[name] = DURATIONS.get(name, 0.0) + time.monotonic() - start


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not CASES:
        return
    profile = os.environ.get("AGENTLS_FUZZ", "small")
    total = sum(CASES.values())
    seconds = sum(DURATIONS.values())
    terminalreporter.section(f"fuzz: {total} cases ({profile} profile) in {seconds:.1f} s")
    for name, count in sorted(CASES.items()):
        spent = CASE_SECONDS.get(name)
        talking = f" ({spent:.1f} s talking to the shared server)" if spent else ""
        terminalreporter.write_line(f"  {count:6d}  {name}{talking}")
    for name, spent in sorted(DURATIONS.items(), key=lambda item: -item[1])[:8]:
        terminalreporter.write_line(f"  {spent:6.1f} s  {name}")
    if SERVER_RSS_KIB:
        mib = ", ".join(f"{kib / 1024:.0f}" for kib in SERVER_RSS_KIB)
        terminalreporter.write_line(f"  shared server RSS every 100 cases (MiB): {mib}")
