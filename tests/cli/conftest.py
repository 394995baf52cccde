"""pytest-qt's QApplication is made first, so an in-process export that draws pictures reuses
it instead of creating a bare QGuiApplication that later widget tests could not use."""

import pytest


@pytest.fixture(autouse=True)
def _qt_application(qapp):
    return qapp
