"""``agentls exec PROMPT``: one turn in the current directory, in the terminal.

A headless client of ``agentls serve``: it starts the server, submits the
prompt, renders the events and progress, and on Ctrl-C cancels the turn the
way an editor does (``$/cancelRequest``), waits for the cancelled result, and
exits non-zero. Exit status: 0 completed, 1 failed, 2 usage error, 130 cancelled.

``--resume [ID|last]`` first continues a stored session of the workspace
(``agent/resume``), so the prompt carries on that conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

from agentls.client.asking import TerminalApprover
from agentls.client.render import TerminalRenderer
from agentls.client.rpc import RpcClient, RpcError
from agentls.client.sessions import resolve
from agentls.config import API_KEY_VARIABLE, ModelConfig, scrub_environment

# An id given to --resume is hex ("last" aside); any other word is the prompt's.
_ID_CHARS = frozenset("0123456789abcdef")


def run_exec(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace or os.getcwd()).resolve()
    prompt = list(args.prompt)
    resume = getattr(args, "resume", None)
    if resume is not None and resume != "last" and not _looks_like_id(resume):
        # `--resume fix the tests`: argparse took the prompt's first word as the id.
        prompt.insert(0, resume)
        resume = "last"
    if not prompt:
        print(
            "agentls exec: a prompt is needed: agentls exec [--resume [ID|last]] PROMPT…",
            file=sys.stderr,
        )
        return 2
    if not workspace.is_dir():
        print(f"agentls: {workspace} is not a directory", file=sys.stderr)
        return 2
    model = ModelConfig.from_env(model=args.model, base_url=args.base_url)
    missing = model.missing_credentials()
    if missing:
        print(f"agentls: {missing}", file=sys.stderr)
        return 2
    options: dict[str, Any] = {
        "workspace": str(workspace),
        "model": model.model,
        "approval": args.approval,
        "sandbox": args.sandbox,
        "network": args.network,
    }
    if model.base_url:
        options["baseUrl"] = model.base_url
    if args.effort:
        options["effort"] = args.effort
    if args.fast:
        options["fastMode"] = True
    return asyncio.run(run_turn(" ".join(prompt), options, TerminalRenderer(), resume=resume))


def _looks_like_id(word: str) -> bool:
    return len(word) >= 8 and set(word) <= _ID_CHARS


async def run_turn(
    prompt: str,
    options: dict[str, Any],
    renderer: TerminalRenderer,
    env: dict[str, str] | None = None,
    *,
    resume: str | None = None,
) -> int:
    client = await RpcClient.spawn([sys.executable, "-m", "agentls", "serve"], env=env)
    if env is None:
        # The server has the key now; ours is a process the user's commands
        # could read it from (/proc/<pid>/environ), so it goes.
        scrub_environment(API_KEY_VARIABLE)
    client.on_request("agent/requestApproval", TerminalApprover.for_stdin(renderer))
    client.on_notification("window/showMessage", lambda params: renderer.notice(params["message"]))
    try:
        await client.initialize(
            options, options["workspace"], experimental={"agentls": {"requestApproval": True}}
        )
    except (RpcError, ConnectionError) as exc:
        print(f"agentls: the server did not start: {exc}", file=sys.stderr)
        await client.shutdown()
        return 1
    client.on_notification("agent/event", renderer.event)

    def progress(params: dict[str, Any]) -> None:
        value = params.get("value") or {}
        if value.get("kind") in ("begin", "report") and value.get("message"):
            renderer.status(value["message"])

    client.on_notification("$/progress", progress)
    if resume is not None:
        problem = await _resume(client, resume)
        if problem is not None:
            print(f"agentls: {problem}", file=sys.stderr)
            await client.shutdown()
            return 2
    msg_id, future = client.request("agent/submit", {"prompt": prompt, "workDoneToken": "exec"})
    loop = asyncio.get_running_loop()
    interrupts = 0

    def interrupt() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            renderer.status("Cancelling… (Ctrl-C again to quit at once)")
            client.cancel(msg_id)
        else:
            client.process.kill()

    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGINT, interrupt)
    try:
        result = await future
    except (RpcError, ConnectionError) as exc:
        print(f"\nagentls: {exc}", file=sys.stderr)
        await client.shutdown()
        return 1
    finally:
        with contextlib.suppress(NotImplementedError):
            loop.remove_signal_handler(signal.SIGINT)
    renderer.result(result)
    await _say_session(client, renderer)
    await client.shutdown()
    return {"completed": 0, "cancelled": 130}.get(result["status"], 1)


async def _resume(client: RpcClient, wanted: str) -> str | None:
    """Continue a stored session in main; what went wrong, if anything."""
    try:
        listed = (await client.call("agent/sessions", {}))["sessions"]
        session_id = resolve(listed, wanted)
        if session_id is None:
            if wanted == "last":
                return "this workspace has no stored session to resume (see `agentls sessions`)"
            return f"no session {wanted!r} in this workspace (see `agentls sessions`)"
        await client.call("agent/resume", {"sessionId": session_id})
    except (RpcError, ConnectionError) as exc:
        return f"could not resume the session: {exc}"
    return None


async def _say_session(client: RpcClient, renderer: TerminalRenderer) -> None:
    """Where the conversation was saved, so it can be continued."""
    try:
        listed = (await client.call("agent/sessions", {}, timeout=10))["sessions"]
    except (RpcError, ConnectionError, TimeoutError):
        return
    session = next((s for s in listed if s.get("pane") == "main"), None)
    if session is not None:
        renderer.session(session["sessionId"])
