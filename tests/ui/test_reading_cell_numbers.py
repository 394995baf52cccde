"""Numbers in the cells (issue 31, item 1): at 1366x768 every view of the starter's walkthrough
writes its cells' values (the score step lays q, k and the scores side by side in narrow
views: the colour bar gives them its room), and a view too small for them says so."""

import window_fixtures
from test_layout import sized

from attention_explorer.ui.heatmap.heatmap_view import HeatmapView
from attention_explorer.ui.heatmap.room_for_numbers import HIDDEN_TEXT

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _written(view) -> bool:
    return view.texts.drawn() == view.frame.texts and len(view.frame.texts) > 0


def test_every_step_writes_the_values_of_its_views_at_1366x768(window, qtbot):
    sized(window, qtbot, 1366, 768)
    walk = window.walkthrough
    seen = set()
    for _ in range(len(walk.steps())):
        step = walk.current()
        shown = [
            (name, view)
            for name, view in window.stages.views().items()
            if view.isVisible() and view.frame is not None
        ]
        for name, view in shown:
            qtbot.waitUntil(lambda v=view: _written(v), timeout=3000)
            assert not view.values_hidden(), (step.key, name)
            assert view.texts.font.pointSizeF() >= 6.0
        seen.add(step.key)
        walk.next_button.click()
    assert "scores" in seen and "weighted_sum" in seen


def test_the_score_step_shows_q_k_and_the_scores_with_numbers(window, qtbot):
    sized(window, qtbot, 1366, 768)
    walk = window.walkthrough
    while walk.current().key != "scores":
        walk.next_button.click()
    for name in ("Q", "K", "scores"):
        view = window.stages.view(name)
        qtbot.waitUntil(lambda v=view: v.isVisible() and v.frame is not None)
        qtbot.waitUntil(lambda v=view: _written(v), timeout=3000)
        assert view.frame.texts[0] in view.texts.drawn()


def test_a_view_too_small_for_its_numbers_says_they_are_hidden(window, qtbot):
    view = HeatmapView("scores", window.session, window.prefs)
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    qtbot.waitExposed(view)
    view.set_trace(window.live.trace, 0)
    qtbot.waitUntil(lambda: view.frame is not None and _written(view))
    assert not view.values_hidden() and view.bar.isVisible()
    view.resize(230, 500)  # too narrow even without the colour bar
    qtbot.waitUntil(lambda: view.values_hidden(), timeout=3000)
    assert view.texts.drawn() == []
    assert view.hidden_note.isVisible() and view.hidden_note.toolTip() == HIDDEN_TEXT
    assert view.hidden_note.text().startswith("values hidden")  # one line, elided to fit
    assert view.hidden_note.parent() is view.graphics  # over the plot: the view is no taller
    window.prefs.show_values = False  # numbers switched off: nothing to say
    assert not view.values_hidden()
    window.prefs.show_values = True
    view.resize(700, 500)
    qtbot.waitUntil(lambda: _written(view), timeout=3000)
    assert not view.values_hidden()


def test_a_narrow_view_gives_the_colour_bar_room_to_its_numbers(window, qtbot):
    view = HeatmapView("scores", window.session, window.prefs)
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    qtbot.waitExposed(view)
    view.set_trace(window.live.trace, 0)
    qtbot.waitUntil(lambda: view.frame is not None and _written(view))
    widths = []
    for width in range(700, 200, -10):  # find a width where only the bar's room makes it fit
        view.resize(width, 400)
        qtbot.wait(10)
        widths.append((width, view.bar.isVisible(), _written(view)))
    assert any(not bar and written for _, bar, written in widths)
