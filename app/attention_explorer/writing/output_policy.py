"""The one output policy every writer follows (command line, Python API, window).

- Write only a regular file, or a new name. A folder, a device, a pipe or a socket at the
  output path is refused; a character device is never replaced by a file.
- Follow a symbolic link only when it is owned by the user running the app (or by root) and
  its target is an existing regular file, as the kernel's ``protected_symlinks`` does in
  sticky folders. Then the target is written and the link stays a link. Otherwise refuse.
- Refuse a read-only file (no write permission bit, or not writable by this user); the window
  asks the user and then passes ``allow_read_only=True``.

Temporary files are short hidden names (``.ae-PID-TOKEN-N.part``, ``.old``), so any valid
255-byte file name can be written; :func:`sweep_leftovers` removes those a killed process left.

Every refusal is an :class:`OutputRefused` (a ValueError) with a one-line message naming the
file. No Qt here.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from pathlib import Path


class OutputRefused(ValueError):
    """An output path the policy will not write: one line naming the file and why."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class OutputReadOnly(OutputRefused):
    """The output path is the user's own read-only file (the window asks before replacing it)."""


#: Hidden temporary names: ``.ae-<pid>-<token>[-<n>].part|.old`` and an optional suffix.
_LEFTOVER = re.compile(r"^\.ae-(?P<pid>\d+)-[0-9a-f]{8}(?:-\d+)?\.(?:part|old)(?:\.[\w]{1,10})?$")


def temp_name(kind: str = "part", index: int | None = None, suffix: str = "") -> str:
    """A new hidden temporary name (at most about 50 bytes): ``.ae-PID-TOKEN[-N].KIND[SUFFIX]``."""
    number = "" if index is None else f"-{index}"
    return f".ae-{os.getpid()}-{secrets.token_hex(4)}{number}.{kind}{suffix}"


def _owner_ok(uid: int) -> bool:
    """True for links owned by the user running the app, or by root."""
    me = os.geteuid() if hasattr(os, "geteuid") else uid
    return uid in (me, 0)


def _is_read_only(path: Path, info: os.stat_result) -> bool:
    """No write bit at all (so even root counts 0444 as read-only), or not writable by us."""
    return not info.st_mode & 0o222 or not os.access(path, os.W_OK)


def _follow_link(path: Path, info: os.stat_result) -> tuple[Path, os.stat_result]:
    """The link's target and its stat, when the policy lets the link be followed."""
    if not _owner_ok(info.st_uid):
        raise OutputRefused(
            f"{path} is a symbolic link owned by another user (uid {info.st_uid}); "
            "not writing through it"
        )
    try:
        target = os.stat(path)
    except OSError:
        raise OutputRefused(
            f"{path} is a symbolic link to a missing file; not writing through it"
        ) from None
    if not stat.S_ISREG(target.st_mode):
        raise OutputRefused(
            f"{path} is a symbolic link to something that is not a regular file; "
            "not writing through it"
        )
    return Path(os.path.realpath(path)), target


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def resolve_output(path: str | os.PathLike, *, allow_read_only: bool = False) -> Path:
    """The file to write for ``path`` under the policy (a link's target), or OutputRefused.

    A new name is returned as is (its folder is checked by the writer).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"an output path must be a str or os.PathLike, got {type(path).__name__}")
    chosen = Path(path).expanduser()
    try:
        info = os.lstat(chosen)
    except FileNotFoundError:
        return chosen
    except NotADirectoryError:
        raise OutputRefused(f"{chosen.parent} is not a folder") from None
    except OSError as exc:
        raise OutputRefused(f"cannot check {chosen}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        chosen, info = _follow_link(chosen, info)
    if stat.S_ISDIR(info.st_mode):
        raise OutputRefused(f"{chosen} is a folder, not a file name")
    if not stat.S_ISREG(info.st_mode):
        raise OutputRefused(f"{chosen} is {_kind(info.st_mode)}; choose a file name")
    if not allow_read_only and _is_read_only(chosen, info):
        raise OutputReadOnly(f"{chosen} is read-only; not replacing it")
    return chosen


def check_output(path: str | os.PathLike, *, allow_read_only: bool = False) -> None:
    """Raise OutputRefused now if writing ``path`` would be refused (check before the work)."""
    resolve_output(path, allow_read_only=allow_read_only)


def with_default_suffix(path: str | os.PathLike, suffix: str) -> Path:
    """``path`` with ``suffix`` added when it has none, after refusing a ``path`` that names
    an existing folder (OutputRefused): a dialog's answer "figures", where a folder of that
    name exists, means the folder, not a new "figures.png" beside it."""
    chosen = Path(path).expanduser()
    try:
        info = os.stat(chosen)
    except OSError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputRefused(f"{chosen} is a folder, not a file name; choose a file name")
    return chosen if chosen.suffix else chosen.with_suffix(suffix)


#: Where a process cannot be asked whether it runs (Windows, where os.kill(pid, 0) would end
#: it), leftovers older than this are removed.
STALE_SECONDS = 24 * 3600


def _alive(pid: int, path: str) -> bool:
    if pid == os.getpid():
        return True
    if os.name == "nt":
        try:
            return time.time() - os.stat(path).st_mtime < STALE_SECONDS
        except OSError:
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True
    return True


def sweep_leftovers(folder: str | os.PathLike) -> list[str]:
    """Remove the hidden temporary files (``.ae-PID-*.part``/``.old``) of dead processes.

    Returns the names removed. Files of a running process (this one included) are kept.
    """
    removed: list[str] = []
    with contextlib.suppress(OSError):
        with os.scandir(folder) as entries:
            for entry in entries:
                match = _LEFTOVER.match(entry.name)
                if not match or _alive(int(match["pid"]), entry.path):
                    continue
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False):
                        os.unlink(entry.path)
                        removed.append(entry.name)
    return removed
