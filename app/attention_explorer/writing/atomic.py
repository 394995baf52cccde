"""Atomic file writing: a temporary name in the same folder, then ``os.replace``.

A crash, a full disk or any exception while writing never leaves a half-written file behind:
the temporary file is removed and the destination is untouched. Replacing a file keeps its
permission bits (0644 stays 0644). What may be written is decided by
:mod:`attention_explorer.writing.output_policy`: a regular file or a new name; a symlink only when
it is the user's (or root's) and points to a regular file (its target is replaced, the link stays
a link); never a device, pipe or folder; a read-only file only with ``allow_read_only``.
The temporary name is short (``.ae-PID-TOKEN.part``), so a 255-byte file name works, and
those a killed process left in the folder are removed on the next write there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from attention_explorer.writing.export_errors import ExportError
from attention_explorer.writing.output_policy import (
    OutputRefused,
    resolve_output,
    sweep_leftovers,
    temp_name,
)


def policy_target(path: str | os.PathLike, allow_read_only: bool = False) -> Path:
    """The file the output policy lets us write for ``path``; ExportError (one line) if none."""
    try:
        return resolve_output(path, allow_read_only=allow_read_only)
    except OutputRefused as exc:
        raise ExportError(str(exc)) from None


def check_folder(folder: str | os.PathLike) -> Path:
    """Return ``folder`` as a Path if it exists, is a folder and may be written to.

    Raises :class:`ExportError` with a one-line message otherwise.
    """
    path = Path(folder).expanduser()
    if not path.exists():
        raise ExportError(f"folder {path} does not exist")
    if not path.is_dir():
        raise ExportError(f"{path} is not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ExportError(f"folder {path} is not writable")
    return path


def describe_os_error(exc: OSError, path: str | os.PathLike) -> str:
    """A one-line message for an OSError raised while writing ``path``."""
    name = Path(path).name
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk is full: could not write {name} in {Path(path).parent}"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"folder {Path(path).parent} is not writable (could not write {name})"
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"could not write {path}: {reason}"


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, allow_read_only: bool = False) -> Iterator[BinaryIO]:
    """Open a temporary file next to ``path`` for binary writing; on success rename it to ``path``.

    On any exception the temporary file is deleted and the exception is re-raised (an OSError
    becomes an :class:`ExportError`). The folder must exist and be writable. A new file gets
    the usual permissions (0666 minus the umask), not the 0600 of ``tempfile``; a replaced
    file keeps its own. ``path`` must pass the output policy (see the module's docstring).
    """
    target = policy_target(path, allow_read_only)
    folder = check_folder(target.parent if str(target.parent) else ".")
    sweep_leftovers(folder)
    try:
        keep_mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        keep_mode = None  # a new file: 0666 minus the umask
    temp = folder / temp_name()
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise ExportError(describe_os_error(exc, target)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            if keep_mode is not None and hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), keep_mode)
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise ExportError(describe_os_error(exc, target)) from None
        raise


def write_bytes_atomic(path: str | os.PathLike, data: bytes, allow_read_only: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically and return the path."""
    with atomic_file(path, allow_read_only) as handle:
        handle.write(data)
    return Path(path)
