"""Permission errors where ``chmod 000`` does not bite (the tests run as root): every stat,
listing and open of a path under a denied folder raises PermissionError, as for another user."""

from __future__ import annotations

import errno
import os
from pathlib import Path


def deny(monkeypatch, *folders: Path) -> None:
    """Make ``folders`` (and everything under them) unreadable for this test."""
    roots = [str(f) for f in folders]

    def denied(path) -> bool:
        text = os.fspath(path)
        text = text.decode() if isinstance(text, bytes) else text
        return any(text == r or text.startswith(r + os.sep) for r in roots)

    def error(path):
        return PermissionError(errno.EACCES, "Permission denied", os.fspath(path))

    real_stat, real_scandir, real_open, real_listdir = os.stat, os.scandir, os.open, os.listdir

    def stat(path, *args, **kwargs):
        if not isinstance(path, int) and denied(path) and os.fspath(path) not in roots:
            raise error(path)  # the folder itself can be looked at, not what it holds
        return real_stat(path, *args, **kwargs)

    def scandir(path=".", *args, **kwargs):
        if denied(path):
            raise error(path)
        return real_scandir(path, *args, **kwargs)

    def open_(path, *args, **kwargs):
        if denied(path):
            raise error(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "open", open_)

    def listdir(path="."):
        if denied(path):
            raise error(path)
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", listdir)
