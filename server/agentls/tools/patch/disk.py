"""The disk side of a patch: what is at a path, and committing planned
states all or nothing — each file through a temporary file renamed into
place, and the files already changed restored if a write still fails.

All access is descriptor-relative through :class:`Workspace`, without
following symlinks."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.tools.patch.errors import PatchError, PatchWriteFailed
from agentls.tools.workspace import Workspace


@dataclass(frozen=True)
class State:
    """What is at one path: on disk before the patch, or planned by it."""

    kind: Literal["absent", "file", "dir", "symlink", "other"]
    data: bytes = b""
    mode: int | None = None  # permission bits of a file
    target: str = ""  # of a symlink


ABSENT = State("absent")


def read_state(ws: Workspace, path: Path) -> State:
    try:
        with ws.dir_fd(path.parent) as parent:
            try:
                st = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                return ABSENT
            if stat.S_ISDIR(st.st_mode):
                return State("dir")
            if stat.S_ISLNK(st.st_mode):
                return State("symlink", target=os.readlink(path.name, dir_fd=parent))
            if not stat.S_ISREG(st.st_mode):
                return State("other")
            # O_NONBLOCK: should it have become a FIFO meanwhile, don't hang on it.
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode):
                    return State("other")
                return State("file", f.read(), stat.S_IMODE(st.st_mode))
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT  # a parent directory is missing (or is a file)
    except OSError as exc:
        raise PatchError(f"cannot read it: {exc.strerror or exc}", path=ws.relative(path)) from None


def make_dir(ws: Workspace, directory: Path) -> bool:
    """Create ``directory``; False if something made it meanwhile."""
    with ws.dir_fd(directory.parent) as parent:
        try:
            os.mkdir(directory.name, 0o777, dir_fd=parent)
        except FileExistsError:
            st = os.stat(directory.name, dir_fd=parent, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                raise
            return False
    return True


def _temp_name(name: str) -> str:
    return f".{name[:180]}.{secrets.token_hex(4)}.apply-patch.tmp"


def write_file(ws: Workspace, path: Path, data: bytes, mode: int | None) -> None:
    """Replace ``path`` with ``data`` atomically: a temp file renamed over it."""
    with ws.dir_fd(path.parent) as parent:
        temp = _temp_name(path.name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        # A new file gets the usual 0o666 minus umask; a replaced one its old mode.
        fd = os.open(temp, flags, 0o666 if mode is None else 0o600, dir_fd=parent)
        try:
            try:
                if mode is not None:
                    os.fchmod(fd, mode & 0o777)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)  # the content is on disk before the name points at it
            finally:
                os.close(fd)
            os.rename(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise


def restore(ws: Workspace, path: Path, original: State) -> None:
    if original.kind == "file":
        write_file(ws, path, original.data, original.mode)
        return
    with ws.dir_fd(path.parent) as parent:
        if original.kind == "absent":
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.name, dir_fd=parent)
        elif original.kind == "symlink":
            temp = _temp_name(path.name)
            os.symlink(original.target, temp, dir_fd=parent)
            try:
                os.rename(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                raise
        else:  # we never change directories or special files
            raise OSError(errno.EINVAL, "cannot restore", str(path))


def commit(
    ws: Workspace,
    pending: dict[Path, State],
    disk: dict[Path, State],
    new_dirs: dict[Path, None],
) -> None:
    """Make ``pending`` (final states) true on disk, creating ``new_dirs``
    first; ``disk`` holds every original state. If a write fails, what was
    already changed is restored and PatchWriteFailed says how that went."""
    writes: list[Path] = []
    deletes: list[Path] = []
    for path, final in pending.items():
        original = disk[path]
        if final.kind == "absent":
            if original.kind != "absent":
                deletes.append(path)
        elif original != final:  # an update that changes nothing is not written
            writes.append(path)

    created: list[Path] = []
    done: list[Path] = []
    current = ""
    try:
        for directory in new_dirs:
            current = ws.relative(directory)
            if make_dir(ws, directory):
                created.append(directory)
        for path in writes:
            current = ws.relative(path)
            final = pending[path]
            write_file(ws, path, final.data, final.mode)
            done.append(path)
        for path in deletes:
            current = ws.relative(path)
            with ws.dir_fd(path.parent) as parent:
                os.unlink(path.name, dir_fd=parent)
            done.append(path)
    except BaseException as exc:
        failed = _rollback(ws, disk, done, created)
        if not isinstance(exc, OSError):
            raise
        reason = exc.strerror or str(exc)
        if failed:
            raise PatchWriteFailed(
                f"could not change {current!r}: {reason}. Restoring the files already "
                f"changed failed for: {', '.join(failed)}; check them before retrying."
            ) from exc
        raise PatchWriteFailed(
            f"could not change {current!r}: {reason}. The files already changed were "
            f"restored; no files were changed."
        ) from exc


def _rollback(
    ws: Workspace, disk: dict[Path, State], done: list[Path], created: list[Path]
) -> list[str]:
    """Restore ``done`` from the originals and remove ``created``; what failed."""
    failed: list[str] = []
    for path in reversed(done):
        try:
            restore(ws, path, disk[path])
        except OSError:
            failed.append(ws.relative(path))
    for directory in reversed(created):
        # Only if empty: never remove anything that was not ours.
        with contextlib.suppress(OSError), ws.dir_fd(directory.parent) as parent:
            os.rmdir(directory.name, dir_fd=parent)
    return failed
