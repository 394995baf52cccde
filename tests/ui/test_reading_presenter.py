"""Presenter mode for the back of the room (issue 31, item 2): at 1920x1080 the current step's
views are laid out alone, their cell digits are at least 18 pixels, their axis names and
ticks grow with the screen, and the followed cell is framed boldly; F5 again puts it back."""

import window_fixtures
from PySide6.QtGui import QFontInfo
from test_layout import sized

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _digit_pixels(view) -> int:
    return QFontInfo(view.texts.font).pixelSize() if view.texts.drawn() else 0


def _tick_points(view, side="left") -> float:
    font = view.plot.getAxis(side).style.get("tickFont")
    return font.pointSizeF() if font is not None else view.plot.getAxis(side).font().pointSizeF()


def _go_to(window, key):
    walk = window.walkthrough
    while walk.current().key != key:
        walk.go_next()


def test_presenter_mode_writes_large_digits_and_frames_the_followed_cell(window, qtbot):
    sized(window, qtbot, 1920, 1080)
    _go_to(window, "scores")
    qtbot.wait(100)
    scores = window.stages.view("scores")
    normal_ticks = _tick_points(scores)
    normal_pen = scores.selection_pen_width()
    normal_bar = scores.bar.axis.style["tickFont"] or scores.bar.axis.font()
    assert _digit_pixels(scores) < 18  # what the issue saw: digits near 10 px
    window.menus.teaching.presenter_action.trigger()  # F5
    assert window.presenter.active()
    for key in ("scores", "weights", "weighted_sum"):
        _go_to(window, key)
        step = window.walkthrough.current()
        qtbot.waitUntil(lambda s=step: s.stage in window.stages.gathered())
        for name in window.stages.gathered():
            view = window.stages.view(name)
            qtbot.waitUntil(lambda v=view: v.isVisible() and v.frame is not None)
            qtbot.waitUntil(lambda v=view: _digit_pixels(v) >= 18, timeout=5000)
            assert view.texts.drawn() == view.frame.texts, (key, name)
            assert _tick_points(view) > 1.4 * normal_ticks, (key, name)
            assert view.selection_pen_width() >= 2 * normal_pen
            bar_font = view.bar.axis.style["tickFont"]  # the colour bar's numbers grow too
            assert bar_font.pointSizeF() > 1.4 * normal_bar.pointSizeF(), (key, name)
    window.menus.teaching.presenter_action.trigger()  # F5 again
    assert not window.presenter.active()
    qtbot.waitUntil(lambda: len(window.stages.gathered()) != 1)
    assert scores.presenting_scale() == 1.0 and scores.selection_pen_width() == normal_pen
    assert _tick_points(scores) == normal_ticks
    assert scores.bar.axis.style["tickFont"].pointSizeF() == normal_bar.pointSizeF()
