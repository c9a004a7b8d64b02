"""What a tool is, what it gets to work with, and what it gives back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from agentls.config import ToolConfig
from agentls.domain import ToolStatus
from agentls.tools.processes import ProcessScope
from agentls.tools.workspace import Workspace


class ToolArgumentError(ValueError):
    """The model called a tool with arguments that do not fit its schema."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The output the model sees, plus what the editor is told about it."""

    output: str
    status: ToolStatus = "completed"
    exit_code: int | None = None

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(output=f"error: {message}", status="failed")


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


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def read_only(self) -> bool:
        """True if the tool can change nothing (approval never asks before it)."""
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
    # Whether the tool changes nothing (approval never asks before such a tool).
    read_only: ClassVar[bool] = False
    description: ClassVar[str]
    properties: ClassVar[dict[str, Any]]
    required: ClassVar[tuple[str, ...]]

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


def shorten(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
