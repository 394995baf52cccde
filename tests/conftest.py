"""Shared test set-up: Qt runs offscreen, and QSettings never touch the user's real ones."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
