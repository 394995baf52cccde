"""Heatmap cards: title, notes, map and colour bar never overlap, at both screen sizes,
for short and long sequences and when zoomed in."""

from __future__ import annotations

import pytest
import window_fixtures
from PySide6.QtCore import QRect, QRectF
from PySide6.QtGui import QFontMetricsF
from test_layout import sized

from attention_explorer.ui.heatmap.heatmap_title import split_heading, wrap_lines

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _scene_rect(view, item) -> QRect:
    """An item of the plot's scene as a rect in the card's coordinates."""
    rect = view.graphics.mapFromScene(item.sceneBoundingRect()).boundingRect()
    return QRect(view.graphics.mapTo(view, rect.topLeft()), rect.size())


def _label_rect(view, label) -> QRect:
    return QRect(label.mapTo(view, label.rect().topLeft()), label.size())


def _needed_width(label) -> float:
    metrics = QFontMetricsF(label.font())
    return max(metrics.horizontalAdvance(line) for line in label.text().split("\n"))


def check_card(view) -> None:
    """Title, notes, map and colour bar: disjoint, each inside the card, no text cut off."""
    bar = view.title_bar
    rects = {"title": _label_rect(view, bar.title)}
    if bar.subtitle.isVisible():
        rects["subtitle"] = _label_rect(view, bar.subtitle)
    rects["map"] = _scene_rect(view, view.plot.getViewBox())
    rects["colour bar"] = _scene_rect(view, view.bar)
    card = view.rect()
    names = list(rects)
    for i, a in enumerate(names):
        assert card.contains(rects[a]), (view.stage, a, rects[a], card)
        for b in names[i + 1 :]:
            assert not rects[a].intersects(rects[b]), (view.stage, a, b, rects[a], rects[b])
    for label in (bar.title, *([bar.subtitle] if bar.subtitle.isVisible() else [])):
        assert _needed_width(label) <= label.width() + 1, (view.stage, label.text())
        lines = label.text().count("\n") + 1
        assert label.height() >= QFontMetricsF(label.font()).lineSpacing() * lines
    assert bar.text() == view.frame.heading  # every word of the heading, none lost


def settled(qtbot, views) -> None:
    """Wait until every card passes :func:`check_card` (the plot lays out after Qt's layout),
    then check each once more so a failure names what overlaps."""

    def ok() -> bool:
        try:
            for view in views:
                check_card(view)
        except AssertionError:
            return False
        return True

    try:
        qtbot.waitUntil(ok, timeout=3000)
    except Exception:  # noqa: BLE001 - report the overlap itself below
        pass
    for view in views:
        check_card(view)


def _shown_cards(window):
    panel = window.stages
    return [panel.view(s) for s in panel.shown_stages() if panel.view(s).frame is not None]


def test_split_heading_keeps_a_title_with_a_dot_whole():
    main, notes = split_heading("output · W_O · 8×8 shown as 1×1", "output · W_O")
    assert main == "output\u00a0·\u00a0W_O" and notes == ["8×8 shown as 1×1"]
    main, notes = split_heading("QKᵀ scores · head 1 · rows 0–3", "QKᵀ scores")
    assert main == "QKᵀ\u00a0scores · head\u00a01" and notes == ["rows 0–3"]


def test_wrap_lines_breaks_at_spaces_only():
    lines = wrap_lines("aaa bbb ccc", lambda line: len(line) <= 7)
    assert lines == ["aaa bbb", "ccc"]
    assert wrap_lines("a\u00a0very\u00a0long", lambda line: len(line) <= 3) == [
        "a\u00a0very\u00a0long"
    ]


@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000)])
def test_cards_do_not_overlap_for_the_starter_and_a_long_sequence(window, qtbot, size):
    sized(window, qtbot, *size)
    window.stages.inputs_toggle.click()  # the output · W_O card and every other
    settled(qtbot, _shown_cards(window))
    window.controls.tokens.setValue(600)
    qtbot.waitUntil(lambda: window.live.trace.n_queries == 600, timeout=30000)
    qtbot.waitUntil(lambda: "600×600 shown" in window.stages.view("scores").frame.heading)
    cards = _shown_cards(window)
    assert any(v.title_bar.subtitle.isVisible() for v in cards)
    settled(qtbot, cards)


@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000)])
def test_a_zoomed_card_keeps_its_title_clear_of_the_colour_bar(window, qtbot, size):
    sized(window, qtbot, *size)
    window.controls.tokens.setValue(600)
    qtbot.waitUntil(lambda: window.live.trace.n_queries == 600, timeout=30000)
    view = window.stages.view("scores")
    view.zoom.show_around(300, 300, 40)
    qtbot.waitUntil(lambda: view.frame.zoomed, timeout=5000)
    assert "rows" in view.title_bar.subtitle.text()
    settled(qtbot, [view])
    assert QRectF(view.title_bar.geometry()).bottom() <= view.graphics.geometry().top()
