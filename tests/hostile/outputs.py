"""Named hostile output paths, and every writer that must treat them the same way.

``TARGETS`` maps a name to ``(make, expected)``: ``make(folder, filename)`` plants something at
``folder/filename`` and returns the path to write; ``expected`` is ``None`` for a clean write, or
the words the one-line refusal must contain. ``WRITERS`` maps a name to ``(filename, write)``;
``write(path, tools)`` writes with one way out of the app and returns ``(code, message)``: 0 and
"" when it wrote, else 2 and the one line it printed or raised.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

OLD = b"old content\n"
#: A token that would clear the screen, turn the text red and ring the bell if printed raw.
ESCAPE_TOKEN = "\x1b[2J\x1b[31mpwned\x07"
FOREIGN_UID = 54321  # a user that is neither root nor the one running the tests


def _new(folder: Path, name: str) -> Path:
    return folder / name


def _regular(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_bytes(OLD)
    return path


def _real(folder: Path, name: str) -> Path:
    real = folder / "real"
    real.mkdir(exist_ok=True)
    target = real / name
    target.write_bytes(OLD)
    return target


def _own_link(folder: Path, name: str) -> Path:
    link = folder / name
    link.symlink_to(_real(folder, name))
    return link


def _link_chain(folder: Path, name: str) -> Path:
    middle = folder / "real" / f"middle-{name}"
    _real(folder, name)
    middle.symlink_to(folder / "real" / name)
    link = folder / name
    link.symlink_to(middle)
    return link


def _foreign_link(folder: Path, name: str) -> Path:
    link = _own_link(folder, name)
    os.lchown(link, FOREIGN_UID, FOREIGN_UID)
    return link


def _link_to(target: str | Path):
    def make(folder: Path, name: str) -> Path:
        link = folder / name
        link.symlink_to(target)
        return link

    return make


def _link_to_folder(folder: Path, name: str) -> Path:
    (folder / "a-folder").mkdir()
    return _link_to(folder / "a-folder")(folder, name)


def _char_device(folder: Path, name: str) -> Path:
    path = folder / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a second /dev/null
    return path


def _fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def _folder(folder: Path, name: str) -> Path:
    path = folder / name
    path.mkdir()
    return path


def _read_only(folder: Path, name: str) -> Path:
    path = _regular(folder, name)
    path.chmod(0o444)
    return path


def _link_to_read_only(folder: Path, name: str) -> Path:
    link = _own_link(folder, name)
    os.chmod(os.path.realpath(link), 0o444)
    return link


def _long_name(folder: Path, name: str) -> Path:
    stem, suffix = os.path.splitext(name)
    return folder / ("w" * (255 - len(suffix)) + suffix)  # the longest valid name


TARGETS = {
    "new-name": (_new, None),
    "regular-file": (_regular, None),
    "own-symlink-to-regular-file": (_own_link, None),
    "own-symlink-chain-to-regular-file": (_link_chain, None),
    "name-of-255-bytes": (_long_name, None),
    "foreign-symlink-to-regular-file": (_foreign_link, "owned by another user"),
    "symlink-to-character-device": (_link_to("/dev/null"), "not a regular file"),
    "dangling-symlink": (_link_to("/nonexistent/attention-explorer/x"), "missing file"),
    "symlink-to-folder": (_link_to_folder, "not a regular file"),
    "symlink-to-read-only-file": (_link_to_read_only, "read-only"),
    "character-device": (_char_device, "character device"),
    "named-pipe": (_fifo, "named pipe"),
    "folder": (_folder, "folder"),
    "read-only-file": (_read_only, "read-only"),
}
#: Targets that only some writers can be pointed at (a CLI export names its own files).
FREE_NAME_ONLY = {"name-of-255-bytes"}


def snapshot(path: Path) -> tuple:
    """What is at ``path`` (not following a link): kind, link text, bytes of a regular file."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ("missing",)
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path), info.st_uid)
    if stat.S_ISREG(info.st_mode):
        return ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return ("other", stat.S_IFMT(info.st_mode))
