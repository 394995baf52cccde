"""The experiment banner's Details never repeat the walkthrough's About text (issue 31, item 3:
"nothing repeats"): no sentence of the About step (the description, the session's sizes, the
notes) is in the Details, before or after "Try it"; the question and what to look for are."""

from __future__ import annotations

import re

import pytest
import window_fixtures
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from window_fixtures import RECOMPUTE_MS

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def about_sentences(window) -> list[str]:
    """Every sentence of at least four words of the walkthrough's About step, as plain text."""
    about = window.walkthrough.steps()[0]
    assert about.key == "about"
    document = QTextDocument()
    document.setHtml(about.text)
    text = document.toPlainText()
    pieces = re.split(r"(?<=[.!?:])\s+|\n+", text)
    return [p.strip() for p in pieces if len(p.split()) >= 4]


def _open(window, qtbot, key):
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example(key)
    qtbot.waitUntil(lambda: window.walkthrough.steps()[0].key == "about", timeout=RECOMPUTE_MS)
    window.banner.set_expanded(True)


def _no_about_sentence_in_details(window):
    details = window.banner.details_text()
    sentences = about_sentences(window)
    assert len(sentences) >= 3  # the description, the sizes, Press Next ...
    repeated = [s for s in sentences if s in details]
    assert repeated == [], repeated


@pytest.mark.parametrize("key", ["tiny-induction-copy", "i-love-pizza", "why-scale-scaled"])
def test_no_sentence_of_the_about_text_is_in_the_details(window, qtbot, key):
    _open(window, qtbot, key)
    session = window.session
    assert session.description and session.notes  # an About with notes to repeat
    _no_about_sentence_in_details(window)
    details = window.banner.details_text()
    assert f"Question: {session.experiment['question']}" in details
    assert f"Look for: {session.experiment['expect']}" in details
    for title, note in session.notes:
        assert note[:60] not in details and (not title or title not in details)
    assert session.description[:60] not in window.banner.plain_text()


def test_after_try_it_the_details_still_repeat_nothing(window, qtbot):
    _open(window, qtbot, "causal-mask")
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        qtbot.mouseClick(window.banner.try_button, Qt.MouseButton.LeftButton)
    details = window.banner.details_text()
    assert "Tried: mask = none" in details
    _no_about_sentence_in_details(window)
