"""Turning an editor's ``Context`` (selection, open documents) into prompt text."""

from __future__ import annotations

from pathlib import Path

from agentls.lsp.paths import uri_to_path
from agentls.schema.wire import Context

_FENCE = "```"


def compose_prompt(prompt: str, context: Context | None, workspace: Path) -> str:
    """The prompt as the model sees it: the user's words, then what they pointed at."""
    if context is None:
        return prompt
    parts = [prompt]
    selection = context.selection
    if selection is not None:
        start, end = selection.range.start, selection.range.end
        where = _display(selection.uri, workspace)
        # A selection that ends at the start of a line (whole lines selected) does not include it.
        last = end.line - 1 if end.character == 0 and end.line > start.line else end.line
        first = start.line + 1
        lines = f"lines {first}-{last + 1}" if last != start.line else f"line {first}"
        fence = _FENCE
        while fence in selection.text:
            fence += "`"
        parts.append(
            f"The user selected this in {where} ({lines}):\n{fence}\n{selection.text}\n{fence}"
        )
    if context.documents:
        shown = ", ".join(_display(uri, workspace) for uri in context.documents)
        parts.append(f"Documents open in the editor: {shown}")
    return "\n\n".join(parts)


def _display(uri: str, workspace: Path) -> str:
    try:
        path = uri_to_path(uri)
    except ValueError:  # not a URI we can read (file://[ ...): show it as given
        return uri
    if path is None:
        return uri
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)
