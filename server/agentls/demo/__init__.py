"""``agentls demo``: a real session, end to end, with a scripted model.

Nothing here is faked but the model: a temporary copy of a small example
repository, the real ``agentls serve`` process, real tools (the tests run,
the patch applies), driven by ``agentls exec``'s client — and, instead of
OpenAI, the package's Responses-compatible fake serving a fixed script over
HTTP on 127.0.0.1. No network, no API key.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from agentls.client.render import TerminalRenderer
from agentls.testing.fake_model import RecordedRequest, Reply, run_in_thread

PROMPT = "The median test fails. Find out why, fix it, and make sure every test passes."

_FIX = """*** Begin Patch
*** Update File: stats.py
@@ def median(values):
     if len(ordered) % 2:
         return ordered[middle]
-    return ordered[middle]
+    return (ordered[middle - 1] + ordered[middle]) / 2
*** End Patch"""

_ANSWER = (
    "Fixed. `median()` returned the upper middle value for an even number of values; "
    "it now returns the mean of the two middle values (`stats.py`). "
    "I ran `python3 -m unittest -v` before the change (1 failure in `test_median_even`) "
    "and after it: all 4 tests pass."
)

_STEPS: list[Reply] = [
    Reply.items(
        Reply.reasoning("The user reports a failing median test. Plan: read, reproduce, fix."),
        Reply.tool_call(
            "update_plan",
            {
                "explanation": "Reproduce the failure before changing anything.",
                "plan": [
                    {"step": "Read stats.py", "status": "in_progress"},
                    {"step": "Run the tests", "status": "pending"},
                    {"step": "Fix median()", "status": "pending"},
                    {"step": "Run the tests again", "status": "pending"},
                ],
            },
        ),
    ),
    Reply.tool_call("read_file", {"path": "stats.py"}),
    Reply.tool_call("exec_command", {"cmd": "python3 -m unittest -v"}),
    Reply.items(
        Reply.text(
            "The even case returns `ordered[middle]` only; it must average both middles.\n",
            delay=0.01,
        ),
        Reply.tool_call("apply_patch", {"patch": _FIX}),
    ),
    Reply.tool_call("exec_command", {"cmd": "python3 -m unittest -v"}),
    Reply.text(_ANSWER, delay=0.015),
]


def scripted_model(request: RecordedRequest) -> Reply:
    """The next step of the script: how many tool results the model has seen so far."""
    seen = sum(1 for item in request.input if item.get("type") == "function_call_output")
    return _STEPS[min(seen, len(_STEPS) - 1)]


def copy_example(destination: Path) -> Path:
    source = resources.files("agentls.demo") / "example"
    target = destination / "stats-demo"
    with resources.as_file(source) as path:
        shutil.copytree(path, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def run_demo(args: argparse.Namespace) -> int:
    from agentls.client.exec import run_turn

    # One stream for everything, so the session reads in order however it is captured.
    out = sys.stdout
    renderer = TerminalRenderer(out=out, err=out)
    banner = (
        "agentls demo — a SCRIPTED model (no network, no API key) drives the real server,\n"
        "real tools and a temporary copy of an example repository.\n"
    )
    print(banner, file=out)
    temp = Path(tempfile.mkdtemp(prefix="agentls-demo-"))
    try:
        repo = copy_example(temp)
        before = (repo / "stats.py").read_text()
        print(f"repository: {repo}\nprompt: {PROMPT}\n", file=out)
        with run_in_thread() as model:
            model.on_request(scripted_model)
            # A throwaway copy of the example: nothing of it is worth storing as a session.
            options = {
                "workspace": str(repo),
                "baseUrl": model.base_url,
                "model": "scripted-demo",
                # The scripted commands are known and run on a throwaway copy:
                # nothing to ask, also where the sandbox is unavailable.
                "approval": "never",
                "sessionRetention": 0,
            }
            code = asyncio.run(run_turn(PROMPT, options, renderer))
        after = (repo / "stats.py").read_text()
        diff = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            "a/stats.py",
            "b/stats.py",
        )
        print("\nthe change on disk:\n" + "".join(diff), file=out)
        return code
    finally:
        if args.keep:
            print(f"kept {temp}", file=out)
        else:
            shutil.rmtree(temp, ignore_errors=True)
