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


@pytest.fixture(scope="session", autouse=True)
def _widget_application_first(request):
    """Each test process makes the full QApplication (pytest-qt's ``qapp``) before any test.

    An export made first creates a plain QGuiApplication (exporting/qt_app.py), which
    pytest-qt then reuses, and the next QWidget aborts the process. Run in one process in
    file order, the window benchmarks' tests happened to come first; spread over workers, the
    order is no longer fixed."""
    request.getfixturevalue("qapp")
