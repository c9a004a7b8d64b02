"""Workspace confinement: every path a tool touches must lie inside the workspace.

A path is resolved (``..`` and symlinks followed) and refused if the result is
outside the root. Resolving once is not enough: a file could be swapped for a
symlink between our check and our use. So file operations go through
``open``/``dir_fd``, which walk the *resolved* path one component at a time
from a descriptor of the root with ``O_NOFOLLOW``: the resolved path has no
symlinks in it, so meeting one on the walk means something changed under us,
and the operation is refused instead of following it out of the workspace.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path


class PathOutsideWorkspace(PermissionError):
    """A path resolves outside the workspace (``..``, absolute, or via a symlink)."""

    def __init__(self, path: str, root: Path) -> None:
        super().__init__(f"path {path!r} is outside the workspace {str(root)!r}")
        self.path = path


class Workspace:
    """The directory tree the agent may read, change and run commands in."""

    __slots__ = ("root",)

    def __init__(self, root: str | os.PathLike[str]) -> None:
        resolved = Path(os.path.realpath(root))
        if not resolved.is_dir():
            raise NotADirectoryError(f"workspace {str(root)!r} is not a directory")
        self.root = resolved

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real, absolute path of ``path`` (relative to the root), if it is inside.

        Symlinks are followed as far as the path exists; a path that does not
        exist yet (a file about to be created) is resolved through its nearest
        existing parent.
        """
        raw = os.fspath(path)
        if not raw or "\x00" in raw:
            raise ValueError(f"invalid path {raw!r}")
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        real = Path(os.path.realpath(candidate))
        if not self.contains(real):
            raise PathOutsideWorkspace(raw, self.root)
        return real

    def contains(self, real: Path) -> bool:
        return real == self.root or self.root in real.parents

    def relative(self, real: Path) -> str:
        """``real`` relative to the root, POSIX style, for messages and titles."""
        return real.relative_to(self.root).as_posix() or "."

    def display(self, path: str | os.PathLike[str]) -> str:
        """Best-effort short name of a path for the user (never raises)."""
        try:
            return self.relative(self.resolve(path))
        except (OSError, ValueError):
            return os.fspath(path)

    # --- descriptor-based access (symlink-swap safe) -------------------------

    def _parts(self, real: Path) -> tuple[str, ...]:
        if not self.contains(real):
            raise PathOutsideWorkspace(str(real), self.root)
        return real.relative_to(self.root).parts

    @contextlib.contextmanager
    def dir_fd(self, real_dir: Path, *, create: bool = False) -> Iterator[int]:
        """A descriptor of the directory ``real_dir`` (inside the workspace),
        reached without following any symlink. With ``create``, missing
        directories are made on the way."""
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in self._parts(real_dir):
                try:
                    next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o777, dir_fd=fd)
                    next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as exc:
                    raise _swapped(exc, part, fd, real_dir) from exc
                os.close(fd)
                fd = next_fd
            yield fd
        finally:
            os.close(fd)

    def open(self, real: Path, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
        """``os.open`` of a resolved path inside the workspace, refusing symlinks."""
        if real == self.root:
            raise IsADirectoryError(errno.EISDIR, "is the workspace root", str(real))
        with self.dir_fd(real.parent) as parent:
            try:
                return os.open(real.name, flags | os.O_NOFOLLOW, mode, dir_fd=parent)
            except OSError as exc:
                raise _swapped(exc, real.name, parent, real) from exc

    def read_bytes(self, path: str | os.PathLike[str]) -> bytes:
        fd = self.open(self.resolve(path))
        with os.fdopen(fd, "rb") as f:
            return f.read()


def _swapped(exc: OSError, name: str, dir_fd: int, path: Path) -> OSError:
    """Turn the errors ``O_NOFOLLOW`` gives on a symlink into a clear refusal."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode):
                return PermissionError(
                    errno.EPERM,
                    "refusing to follow a symlink that appeared after the path was checked",
                    str(path),
                )
    return exc
