"""Reading a session file's bytes safely: regular files only, a cap on bytes actually read.

A FIFO, a device (``/dev/zero``), a folder or a socket is refused without blocking; a file
that grows past the cap while being read is refused once the cap is passed, whatever size
``stat`` reported.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from attention_explorer.session.session_errors import SessionFileError

MAX_FILE_BYTES = 256 * 1024 * 1024
_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_file_bytes(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, else SessionFileError.

    ``limit`` defaults to :data:`MAX_FILE_BYTES`; it counts the bytes actually read.
    """
    path = Path(path)
    limit = MAX_FILE_BYTES if limit is None else limit
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: opening a FIFO with no writer does not wait
    except FileNotFoundError:
        raise SessionFileError("", f"{path} does not exist") from None
    except IsADirectoryError:
        raise SessionFileError("", f"{path} is a folder, not a session file") from None
    except OSError as exc:
        raise SessionFileError("", f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise SessionFileError("", f"{path} is {_kind(mode)}, not a session file")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise SessionFileError("", f"{path.name} is larger than {_size(limit)}")
    except OSError as exc:
        raise SessionFileError("", f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def json_bytes(data: bytes, name: str = "the file") -> bytes:
    """``data`` without a UTF-8 byte order mark, checked to be valid UTF-8 (O(size))."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFileError(
            "", f"{name} is not UTF-8 text (byte {exc.start} is not valid UTF-8)"
        ) from None
    return data
