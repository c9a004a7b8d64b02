"""The API key never appears anywhere: not in notifications, results, receipts,
snapshots, tool environments, nor in the server's own log at DEBUG."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from agentls.client.rpc import RpcClient
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT

KEY = "sk-proj-VERY-distinctive-secret-9c8b7a6d5e4f"


async def test_the_key_is_nowhere(tmp_path: Path) -> None:
    log_file = tmp_path / "server.log"
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    env.pop("OPENAI_BASE_URL", None)
    async with FakeModel() as fake:
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "env; echo key=$OPENAI_API_KEY"}),
            Reply.http_error(401, message=f"Incorrect API key provided: {KEY[:7]}****{KEY[-4:]}"),
            Reply.tool_call("exec_command", {"cmd": "sleep 300"}),
        )
        client = await RpcClient.spawn(
            [
                sys.executable,
                "-m",
                "agentls",
                "serve",
                "--log-level",
                "DEBUG",
                "--log-file",
                str(log_file),
            ],
            env=env,
        )
        seen: list[object] = []
        client.on_notification("agent/event", seen.append)
        client.on_notification("window/logMessage", seen.append)
        client.on_notification("$/progress", seen.append)
        await client.initialize(
            {"workspace": str(tmp_path), "baseUrl": fake.base_url}, str(tmp_path)
        )
        failed = await asyncio.wait_for(
            client.call("agent/submit", {"prompt": "print the key"}), WAIT
        )
        msg_id, cancelled = client.request("agent/submit", {"prompt": "sleep"})
        await fake.wait_for_requests(3, timeout=WAIT)
        client.cancel(msg_id)
        receipt = await asyncio.wait_for(cancelled, WAIT)
        auxiliary = await asyncio.wait_for(client.call("agent/cancel", {}), WAIT)
        await client.shutdown()
        # The model was sent the key — by us, in the Authorization header only.
        assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"
    wire = json.dumps([seen, failed, receipt, auxiliary, fake.requests[1].body])
    assert "key=\\n" in wire or "key=" in wire  # the tool ran and printed an empty key
    log = log_file.read_text()
    assert "DEBUG" in log, "the log really was at DEBUG"
    for haystack in (wire, log):
        assert KEY not in haystack
        assert KEY[-4:] not in haystack
