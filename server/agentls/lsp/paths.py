"""Where the workspace is: from initializationOptions, workspace folders or URIs."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from agentls.protocol.options import InitializationOptions


def workspace_from(
    options: InitializationOptions, root_uri: str | None, root_path: str | None, folders: list[str]
) -> tuple[Path, str]:
    """The workspace and the field it came from: the option, else the first
    folder, rootUri, rootPath, the cwd."""
    candidates = [
        ("initializationOptions.workspace", options.workspace),
        *(("workspaceFolders", folder) for folder in folders),
        ("rootUri", root_uri),
        ("rootPath", root_path),
    ]
    for field, candidate in candidates:
        if not candidate:
            continue
        try:
            path = uri_to_path(candidate)
        except ValueError:
            path = None
        if path is not None:
            return path, field
    return Path.cwd(), "the server's working directory"


def outside_client_folders(
    root: Path, root_uri: str | None, root_path: str | None, folders: list[str]
) -> str | None:
    """None if ``root`` lies in one of the folders the client opened (or it
    named none); else those folders, to say so."""
    opened = [
        path.resolve()
        for value in (*folders, root_uri, root_path)
        if value and (path := _path_or_none(value)) is not None
    ]
    if not opened:
        return None
    real = root.resolve()
    if any(real == folder or folder in real.parents for folder in opened):
        return None
    return ", ".join(dict.fromkeys(str(folder) for folder in opened))


def _path_or_none(value: str) -> Path | None:
    try:
        return uri_to_path(value)
    except ValueError:
        return None


def uri_to_path(value: str) -> Path | None:
    if value.startswith("file:"):
        parsed = urlparse(value)
        return Path(unquote(parsed.path))
    if "://" in value:
        return None
    return Path(value)
