"""What a tool is, what it gets to work with, and what it gives back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agentls.config import ToolConfig
from agentls.tools.processes import ProcessScope
from agentls.tools.workspace import Workspace

ToolStatus = Literal["completed", "failed"]


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
    name: str

    def spec(self) -> dict[str, Any]:
        """The function-tool definition sent to the model."""
        ...

    def title(self, args: dict[str, Any], workspace: Workspace) -> str:
        """A short line for the editor ("Running `pytest -q`", "Editing src/app.py")."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


def function_spec(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": description,
        "strict": False,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": required,
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
