"""Checked reads of a model folder's files: every path is looked at before it is opened.

A model folder comes from a shared, downloaded and sometimes half-broken cache, so no file in
it is trusted by its name: before anything is read, a file must be a regular file (never a
pipe, which would block the open, a device or a folder), it must be named inside its folder
(a shard index naming ``../../etc/passwd`` is refused), and a small file (config.json, the
shard index, tokenizer.json, ``refs/main``) must fit its size budget, checked with ``fstat``
on the opened descriptor (opened without blocking) before a byte is read. Every refusal is a
:class:`~attention_explorer.pretrained.model_errors.ModelError` naming the file.

Discovery never raises on a folder it cannot read (another user's ``chmod 000`` folder in the
Hugging Face cache): :func:`is_file` and :func:`is_dir` answer False, and
:func:`note_unreadable` says so once, quietly (a logging warning).
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

from attention_explorer.pretrained.model_errors import ModelError

MiB = 1 << 20
#: The most each small file may weigh (real ones: config 1-30 kB, an index under 1 MB,
#: tokenizer.json up to 35 MB for Gemma 3's 262k pieces, refs/main 40 bytes).
BUDGETS = {
    "config.json": 4 * MiB,
    "model.safetensors.index.json": 32 * MiB,
    "tokenizer.json": 256 * MiB,
    "refs": 4096,
}
#: How deep a JSON file of a model folder may nest (config.json nests 3 or 4 levels).
MAX_JSON_DEPTH = 64

_log = logging.getLogger("attention_explorer.models")
_noted: set[str] = set()


def note_unreadable(path: Path, exc: OSError | None = None) -> None:
    """Say once per path (a logging warning, never an exception) that ``path`` was skipped."""
    key = str(path)
    if key not in _noted:
        _noted.add(key)
        reason = exc.strerror if exc is not None and exc.strerror else "cannot be read"
        _log.warning("skipped %s: %s", path, reason.lower())


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except (NotADirectoryError, ValueError):
        return None
    except PermissionError as exc:  # the folder holding it cannot be searched: said once
        note_unreadable(path.parent, exc)
        return None
    except OSError as exc:  # a loop of links, an I/O error: skipped, said once
        note_unreadable(path, exc)
        return None


def exists(path: Path) -> bool:
    """True when something is at ``path`` (a file, a pipe, a folder…); False, never an
    exception, when nothing is or it cannot be looked at."""
    return _stat(path) is not None


def is_file(path: Path) -> bool:
    """True when ``path`` is a regular file; False (never an exception) when it cannot be
    looked at (Python 3.11's ``Path.is_file`` raises PermissionError)."""
    info = _stat(path)
    return info is not None and stat.S_ISREG(info.st_mode)


def is_dir(path: Path) -> bool:
    """True when ``path`` is a folder; False when it is not or cannot be looked at."""
    info = _stat(path)
    return info is not None and stat.S_ISDIR(info.st_mode)


def listing(folder: Path, pattern: str = "*") -> list[Path]:
    """The entries of ``folder`` matching ``pattern`` (sorted); [] (said once) when the folder
    cannot be listed."""
    try:
        return sorted(folder.glob(pattern))
    except OSError as exc:
        note_unreadable(folder, exc)
        return []


def budget_of(name: str) -> int | None:
    """The size budget of a file called ``name`` (None: no budget, a weights file)."""
    return BUDGETS.get(name)


def check_name(folder: Path, name: object, where: str) -> Path:
    """``folder / name`` when ``name`` is a plain file name inside ``folder`` (no folder
    part, not ``..``, not absolute); else a ModelError saying what ``where`` names."""
    text = name if isinstance(name, str) else None
    bad = (
        text is None
        or not text
        or text in (".", "..")
        or "/" in text
        or "\\" in text
        or "\0" in text
        or text.startswith(".")
        or os.path.isabs(text)
    )
    if bad:
        raise ModelError(
            "files", f"{where} names {name!r}, which is not a file inside {folder}; refused"
        )
    return folder / text


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _refuse_os(path: Path, exc: OSError) -> ModelError:
    if isinstance(exc, FileNotFoundError):
        return ModelError("files", f"{path} is missing")
    reason = (exc.strerror or type(exc).__name__).lower()
    return ModelError("files", f"{path} cannot be read: {reason}")


def check_file(path: Path, budget: int | None = None) -> os.stat_result:
    """The stat of ``path`` when it is a regular file within ``budget`` bytes (None: any
    size); else a ModelError naming it: missing, unreadable, a pipe or device, too large.
    Only a stat: nothing is opened."""
    try:
        info = path.stat()
    except OSError as exc:
        raise _refuse_os(path, exc) from None
    _check_info(path, info, budget)
    return info


def _check_info(path: Path, info: os.stat_result, budget: int | None) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise ModelError(
            "files", f"{path} is {_kind(info.st_mode)}, not a file; a model folder holds files"
        )
    if budget is not None and info.st_size > budget:
        raise ModelError(
            "files",
            f"{path} is {info.st_size:,} bytes, more than the {budget:,} such a file may "
            "weigh; it is not read",
        )


def open_checked(path: Path, budget: int | None = None):
    """``path`` opened for reading (a binary file object) after the checks of
    :func:`check_file`, made on the opened descriptor: the open never blocks (a pipe is
    opened without waiting for a writer, then refused), and what is read is what was checked."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _refuse_os(path, exc) from None
    try:
        _check_info(path, os.fstat(fd), budget)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_small(path: Path, budget: int | None = None) -> bytes:
    """The bytes of the small file ``path`` (its budget by name unless given), checked first."""
    budget = budget if budget is not None else budget_of(path.name) or 4 * MiB
    with open_checked(path, budget) as handle:
        try:
            data = handle.read(budget + 1)
        except OSError as exc:
            raise _refuse_os(path, exc) from None
    if len(data) > budget:  # grew since the check
        raise ModelError("files", f"{path} is more than the {budget:,} bytes it may weigh")
    return data


def _too_deep(value: object) -> bool:
    """True when the parsed JSON ``value`` nests deeper than :data:`MAX_JSON_DEPTH` (an
    iterative walk: no recursion of its own)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def parse_json(path: Path, data: bytes) -> object:
    """``data`` (the bytes of ``path``) as JSON; a ModelError naming the file when it is not
    UTF-8 JSON or nests deeper than :data:`MAX_JSON_DEPTH`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ModelError("files", f"{path} is not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ModelError(
            "files", f"{path} nests more than {MAX_JSON_DEPTH} levels deep; not a model file"
        ) from None
    except ValueError as exc:
        raise ModelError("files", f"{path} is not valid JSON: {exc}") from None


def read_json(path: Path, budget: int | None = None) -> object:
    """The JSON file ``path`` (checked, within its budget) parsed; ModelError naming it."""
    data = read_small(path, budget)
    parsed = parse_json(path, data)
    if isinstance(parsed, (dict, list)) and _too_deep(parsed):
        raise ModelError(
            "files", f"{path} nests more than {MAX_JSON_DEPTH} levels deep; not a model file"
        )
    return parsed
