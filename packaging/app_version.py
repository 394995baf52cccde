"""The package version, read from app/attention_explorer/_version.py without importing the package.

Its own module so that build.py (which imports smoke.py) and smoke.py both read it without
importing each other.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_version() -> str:
    """The version in app/attention_explorer/_version.py, read without importing the package."""
    text = (ROOT / "app" / "attention_explorer" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    if match is None:
        raise SystemExit("packaging: no __version__ in app/attention_explorer/_version.py")
    return match.group(1)
