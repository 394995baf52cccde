"""The walkthrough's narration is laid out again only when its text changed, and an edit
that changes the step's numbers always reaches it."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtGui import QTextDocument  # noqa: E402
from test_walkthrough_panel import make_panel  # noqa: E402 - the panel those tests use

from attention_explorer.session import starter_session  # noqa: E402


def _panel(qtbot):
    panel, session, live = make_panel(qtbot, starter_session())
    while panel.current().key != "weights":
        panel.go_next()
    return panel, session, live


def _plain(html: str) -> str:
    document = QTextDocument()
    document.setHtml(html)
    return document.toPlainText()


def _record_set_html(monkeypatch, panel) -> list[str]:
    calls, real = [], panel.narration.setHtml

    def recorded(html):
        calls.append(html)
        real(html)

    monkeypatch.setattr(panel.narration, "setHtml", recorded)
    return calls


def test_the_same_numbers_again_leave_the_narration_alone(qtbot, monkeypatch):
    panel, _, live = _panel(qtbot)
    set_html = _record_set_html(monkeypatch, panel)
    live.recompute_now()  # nothing changed
    assert set_html == []
    assert panel.narration.toPlainText() == _plain(panel.current().text)


def test_new_numbers_reach_the_narration(qtbot, monkeypatch):
    panel, session, live = _panel(qtbot)
    before = panel.narration.toPlainText()
    set_html = _record_set_html(monkeypatch, panel)
    session.inputs = session.inputs.with_array("X", np.asarray(session.inputs.X) * 1.7)
    live.recompute_now()
    assert panel.current().key == "weights"
    assert len(set_html) == 1
    assert panel.narration.toPlainText() == _plain(panel.current().text) != before


def test_restart_on_the_same_text_still_goes_back_to_the_top(qtbot, monkeypatch):
    panel, _, _ = _panel(qtbot)
    panel.restart()
    panel.resize(260, 150)  # the first step scrolls in a small panel
    bar = panel.narration.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    bar.setValue(bar.maximum())
    set_html = _record_set_html(monkeypatch, panel)
    panel.restart()  # the very same first step: no new document, but back at the top
    assert set_html == [] and panel.index() == 0
    assert bar.value() == 0
