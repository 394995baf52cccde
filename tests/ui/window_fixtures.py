"""The real MainWindow for pytest-qt tests, with a throwaway QSettings and recorded dialogs."""

from contextlib import contextmanager

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from attention_explorer.ui.widgets import dialogs as message_boxes
from attention_explorer.ui.window.main_window import MainWindow

RECOMPUTE_MS = 5000


@pytest.fixture
def dialogs(monkeypatch):
    """Record the window's message boxes instead of blocking on them (questions: Discard)."""
    shown: list[tuple[str, str]] = []

    def record(kind, answer):
        def show(parent, title, text, *args, **kwargs):
            shown.append((kind, text))
            return answer

        return show

    monkeypatch.setattr(message_boxes, "warning", record("warning", QMessageBox.StandardButton.Ok))
    monkeypatch.setattr(
        message_boxes, "question", record("question", QMessageBox.StandardButton.Discard)
    )
    return shown


@contextmanager
def explorer_window(qtbot, tmp_path):
    """The real window on the starter session, shown, with a throwaway QSettings; closed after
    (without asking to save)."""
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(session=None, settings=settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    try:
        yield win
    finally:
        win.history.mark_clean()  # closing must never wait on "save changes?"
        win.live.shutdown()
        win.close()


@pytest.fixture
def window(qtbot, tmp_path, dialogs):
    """The real window on the starter session (4 tokens, 2 heads, causal, projection)."""
    with explorer_window(qtbot, tmp_path) as win:
        yield win


def choose(combo, key) -> None:
    """Pick the combo box item whose data is ``key``, as the user would from the list."""
    index = combo.findData(key)
    assert index >= 0, f"{key!r} is not offered"
    combo.setCurrentIndex(index)


def shown_stage_panel(qtbot, session, size=(1100, 850)):
    """(live trace, stage panel) on ``session``: the panel shown at ``size``, a pass started."""
    from attention_explorer.ui.pipeline.stage_panel import StagePanel
    from attention_explorer.ui.state.live_trace import LiveTrace
    from attention_explorer.ui.state.preferences import ViewPreferences

    live = LiveTrace(session)
    panel = StagePanel(session, live, ViewPreferences())
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    qtbot.waitExposed(panel)
    live.recompute_now()
    return live, panel
