"""``read_file``: numbered lines of a text file in the workspace."""

from __future__ import annotations

import os
from typing import Any

from agentls.tools.base import (
    FunctionTool,
    ToolArgumentError,
    ToolContext,
    ToolResult,
    get_int,
    get_str,
)
from agentls.tools.files import text_lines
from agentls.tools.workspace import Workspace

# Refuse to pull huge files into memory just to show a few lines of them.
_MAX_FILE_BYTES = 32 * 1024 * 1024


class ReadFile(FunctionTool):
    name = "read_file"
    read_only = True
    description = (
        "Read a text file in the workspace. Returns numbered lines (`N<TAB>text`), "
        "starting at `offset` (1-based, default 1), at most `limit` lines (at most 256 "
        "lines or 32 KiB per call; the output says where to read on)."
    )
    properties = {
        "path": {"type": "string", "description": "File path, relative to the workspace."},
        "offset": {"type": "integer", "description": "First line to return (1-based)."},
        "limit": {"type": "integer", "description": "Maximum number of lines."},
    }
    required = ("path",)
    read_only = True

    def title(self, args: dict[str, Any], workspace: Workspace) -> str:
        return f"Reading {workspace.display(str(args.get('path', '')))}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = get_str(args, "path") or ""
        offset = get_int(args, "offset", minimum=1) or 1
        most = ctx.config.read_file_max_lines
        limit = min(get_int(args, "limit", minimum=1) or most, most)
        real = ctx.workspace.resolve(path)
        if real.is_dir():
            raise ToolArgumentError(f"{ctx.workspace.relative(real)!r} is a directory")
        document = ctx.files.documents([real]).get(real)
        if document is not None:
            # Open in the editor: its text there, unsaved changes included.
            text = document.text
        else:
            fd = ctx.workspace.open(real)
            with os.fdopen(fd, "rb") as f:
                data = f.read(_MAX_FILE_BYTES + 1)
            if len(data) > _MAX_FILE_BYTES:
                return ToolResult.error(f"{path!r} is larger than {_MAX_FILE_BYTES} bytes")
            if b"\x00" in data[:8192]:
                return ToolResult.error(f"{path!r} looks like a binary file")
            text = data.decode("utf-8", errors="replace")
        lines = [line.rstrip("\r\n") for line in text_lines(text)]
        if not lines:
            return ToolResult(output="(empty file)")
        if offset > len(lines):
            return ToolResult.error(
                f"offset {offset} is past the end of the file ({len(lines)} lines)"
            )
        end = min(len(lines), offset - 1 + limit)
        width = ctx.config.read_file_max_line_chars
        room = ctx.config.read_file_max_bytes
        shown: list[str] = []
        for number in range(offset, end + 1):
            line = lines[number - 1]
            if len(line) > width:
                line = line[:width] + f"… [{len(line) - width} more characters]"
            entry = f"{number}\t{line}"
            room -= len(entry.encode("utf-8")) + 1
            if room < 0 and shown:
                end = number - 1  # the byte bound: the rest on the next call
                break
            shown.append(entry)
        if end < len(lines):
            shown.append(f"… {len(lines) - end} more lines; read on with offset={end + 1}")
        return ToolResult(output="\n".join(shown))
