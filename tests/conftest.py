"""Shared test set-up: Qt runs offscreen, and QSettings never touch the user's real ones."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _forget_cuts():
    """Each test starts with no remembered cuts (see session/cut_memory.py)."""
    from attention_explorer.session.cut_memory import MEMORY

    MEMORY.clear()
    yield
    MEMORY.clear()
