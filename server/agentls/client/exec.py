"""``agentls exec PROMPT``: one turn in the current directory, in the terminal.

A headless client of ``agentls serve``: it starts the server, submits the
prompt, renders the events and progress, and on Ctrl-C cancels the turn the
way an editor does (``$/cancelRequest``), waits for the cancelled result, and
exits non-zero. Exit status: 0 completed, 1 failed, 2 usage error, 130 cancelled.
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
from agentls.config import API_KEY_VARIABLE, ModelConfig, scrub_environment


def run_exec(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace or os.getcwd()).resolve()
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
    return asyncio.run(run_turn(" ".join(args.prompt), options, TerminalRenderer()))


async def run_turn(
    prompt: str,
    options: dict[str, Any],
    renderer: TerminalRenderer,
    env: dict[str, str] | None = None,
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
    await client.shutdown()
    return {"completed": 0, "cancelled": 130}.get(result["status"], 1)
