"""The sandbox's cost per command: ``exec_command`` of ``true`` in a pane's
sandbox and unsandboxed, alternately, through the tool itself (launch, wait,
the sweep of leftovers, the exit status). Also the first sandboxed command
of a pane, which starts its sandbox.

Run as ``python -m bench.sandbox_probe REPS WORKSPACE``; prints one JSON
object: ``{"sandboxed": [ms...], "unsandboxed": [ms...], "first": ms,
"available": bool, "reason": str}``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from agentls.config import SandboxPolicy, ToolConfig
from agentls.tools import sandbox
from agentls.tools.base import ToolContext
from agentls.tools.exec_command import ExecCommand
from agentls.tools.processes import ProcessScope
from agentls.tools.shell import Shell
from agentls.tools.workspace import Workspace


async def probe(reps: int, workspace: Path) -> dict[str, Any]:
    available = await sandbox.availability()
    out: dict[str, Any] = {
        "sandboxed": [],
        "unsandboxed": [],
        "first": None,
        "available": available.ok,
        "reason": available.reason or "",
    }
    config = ToolConfig()
    tool = ExecCommand()
    async with anyio.create_task_group() as group:
        shells = {
            "sandboxed": Shell(group, workspace, SandboxPolicy(), config),
            "unsandboxed": Shell(group, workspace, SandboxPolicy(mode="off"), config),
        }
        contexts = {
            name: ToolContext(
                Workspace(workspace),
                config,
                ProcessScope(),
                lambda text: None,
                lambda *args: None,
                shell=shell,
            )
            for name, shell in shells.items()
        }

        async def once(name: str) -> float:
            t0 = time.perf_counter()
            result = await tool.run({"cmd": "true"}, contexts[name])
            assert result.exit_code == 0, result.output
            return (time.perf_counter() - t0) * 1000

        if available.ok:
            out["first"] = await once("sandboxed")
        await once("unsandboxed")  # the same warm-up for both
        for _ in range(reps):
            for name in ("sandboxed", "unsandboxed") if available.ok else ("unsandboxed",):
                out[name].append(await once(name))
        for shell in shells.values():
            await shell.close()
        group.cancel_scope.cancel()
    return out


def main() -> int:
    reps, workspace = int(sys.argv[1]), Path(sys.argv[2])
    print(json.dumps(anyio.run(probe, reps, workspace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
