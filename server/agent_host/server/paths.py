"""Where the workspace is: from initializationOptions, workspace folders or URIs."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from agent_host.protocol.options import InitializationOptions


def workspace_from(
    options: InitializationOptions, root_uri: str | None, root_path: str | None, folders: list[str]
) -> Path:
    """The workspace: the option, else the first folder, rootUri, rootPath, the cwd."""
    for candidate in (options.workspace, *folders, root_uri, root_path):
        if not candidate:
            continue
        path = uri_to_path(candidate)
        if path is not None:
            return path
    return Path.cwd()


def uri_to_path(value: str) -> Path | None:
    if value.startswith("file:"):
        parsed = urlparse(value)
        return Path(unquote(parsed.path))
    if "://" in value:
        return None
    return Path(value)
