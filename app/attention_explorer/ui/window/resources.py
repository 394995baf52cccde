"""Paths of files shipped in attention_explorer.resources (icons, examples)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def icon_path() -> Path | None:
    """The application icon (PNG preferred), or None when it is not shipped."""
    root = files("attention_explorer.resources")
    for name in ("icon.png", "icon.svg"):
        candidate = root / name
        if candidate.is_file():
            return Path(str(candidate))
    return None
