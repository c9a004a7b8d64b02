"""What a tool is, what it gets to work with, and what it gives back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import anyio

from agentls.config import ToolConfig
from agentls.domain import ToolStatus
from agentls.tools.files import DiskFiles, Files
from agentls.tools.processes import ProcessScope
from agentls.tools.workspace import Workspace

if TYPE_CHECKING:
    from agentls.tools.shell import Shell


class ToolArgumentError(ValueError):
    """The model called a tool with arguments that do not fit its schema."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The output the model sees, plus what the editor is told about it."""

    output: str
    status: ToolStatus = "completed"
    exit_code: int | None = None
    # What a patch changed, as a unified diff (for the editor, not the model).
    diff: str | None = None

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(output=f"error: {message}", status="failed")


@dataclass(slots=True)
class StopRequest:
    """The user's request to stop one running call (``agent/cancelTool``)."""

    requested: anyio.Event = field(default_factory=anyio.Event)
    # Processes the stop killed (the answer to agent/cancelTool).
    killed: int = 0

    @property
    def is_set(self) -> bool:
        return self.requested.is_set()


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a tool may touch during one call."""

    workspace: Workspace
    config: ToolConfig
    processes: ProcessScope
    # Streams output to the editor as it comes (display only).
    emit_output: Callable[[str], None]
    # Reports a new plan to the editor.
    emit_plan: Callable[[str | None, list[dict[str, str]]], None]
    # The pane's way to run commands (its sandbox, its background processes);
    # None: commands run directly, unsandboxed (tools used on their own).
    shell: Shell | None = None
    # Set when the user stops this one call (``agent/cancelTool``): a tool
    # that runs something stops it and returns what it has so far.
    stop: StopRequest | None = None
    # The turn this call belongs to.
    turn_id: int = 0
    # Where files are read and patches go: the editor's documents, or the disk.
    files: Files = field(default_factory=DiskFiles)


@dataclass(frozen=True, slots=True)
class SandboxState:
    """What the sandbox does for the pane right now (approvals depend on it)."""

    # Commands run in the sandbox.
    active: bool
    # ... and may write the workspace there (``workspace-write``).
    writable: bool


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def read_only(self) -> bool:
        """True if the tool can change nothing (it never asks for approval)."""
        ...

    @property
    def stoppable(self) -> bool:
        """True if it answers ``ToolContext.stop`` with what it has so far."""
        ...

    def sandboxed(self, args: dict[str, Any], sandbox: SandboxState) -> bool:
        """True if this call is confined by the sandbox (then ``on-request``
        does not ask): a command that runs in it, a patch it would allow."""
        ...

    def spec(self) -> dict[str, Any]:
        """The tool definition sent to the model."""
        ...

    def title(self, args: dict[str, Any], workspace: Workspace) -> str:
        """A short line for the editor ("Running `pytest -q`", "Editing src/app.py")."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


class FunctionTool:
    """A tool offered as a function: it declares its name, description and
    JSON-schema properties; the definition sent to the model is built here."""

    name: ClassVar[str]
    description: ClassVar[str]
    properties: ClassVar[dict[str, Any]]
    required: ClassVar[tuple[str, ...]]
    # Whether the tool changes nothing (approval never asks before such a tool).
    read_only: ClassVar[bool] = False
    # Stops early and answers with what it has when ``ToolContext.stop`` is
    # set; other tools are simply cancelled by ``agent/cancelTool``.
    stoppable: ClassVar[bool] = False

    def sandboxed(self, args: dict[str, Any], sandbox: SandboxState) -> bool:
        return False

    def spec(self) -> dict[str, Any]:
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "strict": False,
            "parameters": {
                "type": "object",
                "properties": self.properties,
                "required": list(self.required),
                "additionalProperties": False,
            },
        }


def get_str(args: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolArgumentError(f"missing required argument {key!r}")
        return None
    if not isinstance(value, str):
        raise ToolArgumentError(f"argument {key!r} must be a string, not {type(value).__name__}")
    return value


def get_int(args: dict[str, Any], key: str, *, minimum: int = 0) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    # JSON has one number type; accept 5.0 but not 5.5 or "5".
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ToolArgumentError(f"argument {key!r} must be an integer")
    if value < minimum:
        raise ToolArgumentError(f"argument {key!r} must be at least {minimum}")
    return int(value)


def get_bool(args: dict[str, Any], key: str) -> bool:
    value = args.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ToolArgumentError(f"argument {key!r} must be true or false")
    return value


def shorten(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
