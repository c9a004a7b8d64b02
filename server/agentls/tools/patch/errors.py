"""The failures of a patch: each says, for the model, what went wrong and
what became of the files."""

from __future__ import annotations

NOTHING_CHANGED = "The patch was not applied; no files were changed."


class PatchError(Exception):
    """A patch that cannot be parsed or applied. The message is for the model."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        where = path or ""
        if line is not None:
            where = f"{where} (patch line {line})" if where else f"patch line {line}"
        super().__init__(f"{where}: {message}" if where else message)


class PatchNotApplied(PatchError):
    """A patch that did not apply: its message says that no file was changed."""


class PatchWriteFailed(PatchError):
    """Writing a planned change failed: the message says whether the files
    already changed were restored."""


def nothing_changed(exc: PatchError) -> PatchError:
    """``exc`` saying what became of the files (nothing changed, unless it
    says otherwise itself)."""
    if isinstance(exc, PatchNotApplied | PatchWriteFailed):
        return exc
    return PatchNotApplied(f"{exc.message}\n{NOTHING_CHANGED}", path=exc.path, line=exc.line)
