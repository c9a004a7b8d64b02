"""The benchmark harness (``bench/``, ``make bench``) in its smoke mode: tiny
sizes, no target checks, nothing downloaded — so that it cannot rot unnoticed.
Codex takes part only if a previous ``make bench`` left it in the cache."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from bench.fakehub import last_user_tag, tag
from bench.stats import Summary, percentile

ROOT = Path(__file__).resolve().parent.parent


def test_percentiles_interpolate() -> None:
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0], 90) == pytest.approx(1.9)
    summary = Summary.of([float(v) for v in range(1, 101)])
    assert summary.p50 == 50.5 and summary.max == 100.0
    assert summary.p90 == pytest.approx(90.1)


def test_replies_are_routed_by_the_last_user_message() -> None:
    body = {
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": f"{tag('fd', 1)} hi"}]},
            {"type": "message", "role": "assistant", "content": [{"text": "x"}]},
            {"role": "user", "content": f"{tag('tp', 7)} again"},
        ]
    }
    assert last_user_tag(body) == ("tp", 7)
    # A follow-up after a tool call is not a new prompt.
    body["input"].append({"type": "function_call_output", "call_id": "c", "output": ""})
    assert last_user_tag(body) is None


@pytest.mark.timeout(170)
def test_smoke_run_writes_the_table_json_and_plot(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=160,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    table = (tmp_path / "results.md").read_text()
    data = json.loads((tmp_path / "results.json").read_text())
    keys = {figure["key"] for figure in data["figures"]}
    assert keys == {
        "startup",
        "submit",
        "first-delta",
        "throughput",
        "cancel",
        "fork",
        "memory",
        "load",
        "sandbox",
        "mcp",
        "compaction",
        "sessions",
        "edits",
    }
    for figure in data["figures"]:
        assert figure["series"], figure["key"]
        assert all(s["summary"]["n"] >= 1 for s in figure["series"])
        # Smoke runs check no target.
        assert all(t["met"] is None for t in figure["targets"])
        assert f"### {figure['title']}" in table
    throughput = next(f for f in data["figures"] if f["key"] == "throughput")
    assert all("text intact in 1 of 1" in note for note in throughput["notes"])
    submit = next(f for f in data["figures"] if f["key"] == "submit")
    metrics = {s["metric"] for s in submit["series"]}
    assert "serialising the request body, 100 items (in-process)" in metrics
    assert "submit → model request, 100-item conversation" in metrics
    store = next(f for f in data["figures"] if f["key"] == "sessions")
    assert all("text intact in 1 of 1" in note for note in store["notes"])
    cancel = next(f for f in data["figures"] if f["key"] == "cancel")
    assert any("agentls: every process dead" in note for note in cancel["notes"])
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "results.png").stat().st_size > 10_000


@pytest.mark.timeout(170)
def test_a_baseline_revision_runs_beside_this_checkout(tmp_path: Path) -> None:
    """``--baseline REV``: that revision's server, before and after in one run."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bench", "--smoke", "--no-codex", "--out", str(tmp_path)),
            *("--only", "first-delta,throughput", "--baseline", "HEAD"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=160,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads((tmp_path / "results.json").read_text())
    for figure in data["figures"]:
        if figure["key"] in ("first-delta", "throughput"):
            contestants = {s["contestant"] for s in figure["series"]}
            assert {"agentls", "agentls before"} <= contestants, figure["key"]
            assert any("against the baseline" in t["target"] for t in figure["targets"])
