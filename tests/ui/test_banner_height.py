"""A long banner text does not push the views off a small screen: the Details are as tall as
their text up to a fifth of the window, then they scroll. The Details hold the question, what
to look for and what was tried, never the example's description or notes: those are the
walkthrough's About step (issue 31: nothing repeats)."""

from __future__ import annotations

import window_fixtures
from test_layout import sized

from attention_explorer.session import starter_session
from attention_explorer.ui.walkthrough.experiment_banner import MAX_HEIGHT_SHARE

window, dialogs = window_fixtures.window, window_fixtures.dialogs

#: A question long enough to need more than a fifth of a 768-pixel window.
LONG_QUESTION = " ".join(f"Sentence {k} of a long question about the weights." for k in range(40))


def _expand(window, qtbot):
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=5000)
    window.banner.set_expanded(True)  # the banner starts as one line; Details opens it
    qtbot.wait(100)


def test_a_long_text_scrolls_inside_a_fifth_of_the_window(window, qtbot):
    sized(window, qtbot, 1366, 768)
    data = starter_session().with_changes(
        experiment={"question": LONG_QUESTION, "expect": "the last line: look for me"}
    )
    window.document.replace(data)
    _expand(window, qtbot)
    banner = window.banner
    assert banner.scroll.height() <= int(768 * MAX_HEIGHT_SHARE)
    assert banner.scroll.verticalScrollBar().maximum() > 0  # the rest is a scroll away
    assert "look for me" in banner.details_text()  # nothing of the text is lost
    window.resize(1600, 1000)  # a taller window gives the banner more room
    qtbot.waitUntil(lambda: banner.scroll.height() > int(768 * MAX_HEIGHT_SHARE), timeout=3000)
    assert banner.scroll.height() <= int(1000 * MAX_HEIGHT_SHARE)


def test_a_short_text_shows_whole_without_a_scroll_bar(window, qtbot):
    sized(window, qtbot, 1366, 768)
    assert window.open_example("tiny-induction-copy")
    _expand(window, qtbot)
    banner = window.banner
    assert banner.scroll.verticalScrollBar().maximum() == 0
    assert banner.scroll.height() >= banner.text.heightForWidth(banner.scroll.viewport().width())
    question = window.session.experiment["question"]
    assert f"Question: {question}" in banner.details_text()


def test_notes_are_not_in_the_details(window, qtbot):
    """The induction example's notes (13 lines at 1366x768 when the banner held them) are read
    in the walkthrough's About step, not a second time in the banner."""
    sized(window, qtbot, 1366, 768)
    assert window.open_example("tiny-induction-copy")
    _expand(window, qtbot)
    titles = [title for title, _ in window.session.notes]
    assert "The model copies, and knockouts break it" in titles
    assert "knockouts break it" not in window.banner.plain_text()
    assert window.banner.scroll.height() <= 4 * window.banner.fontMetrics().lineSpacing()


def test_an_example_with_no_question_is_a_title_line_with_no_details(window, qtbot):
    sized(window, qtbot, 1366, 768)  # the starter: a description, no question
    banner = window.banner
    assert banner.isVisible() and "Starter" in banner.title_line.text()
    assert not banner.more_button.isVisible() and banner.details_text() == ""
