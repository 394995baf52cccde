"""The window's layout on small and common screens, and the keyboard in the stage column."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
import window_fixtures
from PySide6.QtCore import QRect, Qt

# The real window (and its recorded dialogs), as pytest fixtures of this module.
window, dialogs = window_fixtures.window, window_fixtures.dialogs

HEART = ("scores", "weights")


def sized(win, qtbot, width: int, height: int):
    """Lay ``win`` out as a first start on a ``width`` x ``height`` screen does."""
    win.resize(width, height)
    win.fit_docks(width, height)
    qtbot.waitUntil(lambda: win.width() == width and win.height() == height)
    qtbot.waitUntil(lambda: win.stages.view("weights").frame is not None, timeout=10000)
    qtbot.wait(50)  # let the layouts settle


def fully_on_screen(win, stage: str) -> bool:
    """True when the whole view of ``stage`` lies inside the stage column's viewport."""
    view = win.stages.view(stage)
    return view.isVisible() and win.stages.visible_rect(stage) == QRect(
        view.mapTo(win.stages.scroll_area().viewport(), view.rect().topLeft()), view.size()
    )


@pytest.mark.parametrize("width, height", [(1366, 768), (1600, 1000)])
def test_scores_and_weights_fit_with_the_controls_unscrolled(window, qtbot, width, height):
    sized(window, qtbot, width, height)
    for stage in HEART:
        assert fully_on_screen(window, stage), stage
    controls = window.controls_dock.widget()
    assert not controls.verticalScrollBar().isVisible()
    assert not controls.horizontalScrollBar().isVisible()
    assert window.matrices.isVisible() and window.matrices.height() > 200  # an editor too


def test_at_1600x1000_the_whole_attention_row_is_in_view(window, qtbot):
    sized(window, qtbot, 1600, 1000)
    for stage in ("scores", "scaled", "masked", "weights", "head_outputs"):
        assert fully_on_screen(window, stage), stage


def test_small_matrices_keep_every_number_at_1366x768(window, qtbot):
    sized(window, qtbot, 1366, 768)
    for stage in HEART:
        view = window.stages.view(stage)
        assert view.width() >= view.wanted_width()  # the width at which every number fits
        assert view.frame.texts and all(view.frame.texts)


def test_the_inputs_fold_on_a_small_screen_and_open_on_a_click(window, qtbot):
    sized(window, qtbot, 1366, 768)
    panel = window.stages
    assert not panel.inputs_open() and not panel.view("Q").isVisible()
    assert "Q, K, V" in panel.inputs_toggle.text()
    qtbot.mouseClick(panel.inputs_toggle, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.view("Q").isVisible())
    assert panel.inputs_open()
    qtbot.mouseClick(panel.inputs_toggle, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.view("Q").isVisible())
    qtbot.waitUntil(lambda: fully_on_screen(window, "weights"))


@pytest.mark.parametrize("example", [None, "causal-mask"])
@pytest.mark.parametrize("width, height", [(1366, 768), (1600, 1000)])
def test_each_walkthrough_step_scrolls_its_framed_view_into_sight(
    window, qtbot, width, height, example
):
    if example is not None:
        assert window.open_example(example)
    sized(window, qtbot, width, height)
    walk, seen = window.walkthrough, []
    for _ in range(len(walk.steps())):
        stage = walk.current().stage
        if stage in window.stages.views():
            qtbot.waitUntil(lambda s=stage: window.stages.view(s).is_highlighted())
            qtbot.waitUntil(lambda s=stage: fully_on_screen(window, s))
            seen.append(stage)
        walk.next_button.click()
    assert {"Q", "K", "V", "scores", "masked", "weights"} <= set(seen)


def test_ctrl_brackets_step_through_every_stage_and_show_it(window, qtbot):
    sized(window, qtbot, 1366, 768)
    panel, session = window.stages, window.session
    window.stages.keys.select_stage("X")
    visited = ["X"]
    for _ in range(len(panel.shown_stages()) - 1):
        qtbot.keyClick(window, Qt.Key.Key_BracketRight, Qt.KeyboardModifier.ControlModifier)
        visited.append(session.selected_stage)
        assert fully_on_screen(window, session.selected_stage), session.selected_stage
        assert panel.view(session.selected_stage).graphics.hasFocus()
    assert tuple(visited) == panel.shown_stages()
    qtbot.keyClick(window, Qt.Key.Key_BracketLeft, Qt.KeyboardModifier.ControlModifier)
    assert session.selected_stage == visited[-2]


def test_arrow_keys_move_the_selected_cell_of_the_focused_view(window, qtbot):
    sized(window, qtbot, 1366, 768)
    session, graphics = window.session, window.stages.view("weights").graphics
    window.stages.keys.select_stage("weights")
    qtbot.keyClick(graphics, Qt.Key.Key_Home)
    assert session.selected_cell == (0, 0)
    qtbot.keyClick(graphics, Qt.Key.Key_Down)
    qtbot.keyClick(graphics, Qt.Key.Key_Down)
    qtbot.keyClick(graphics, Qt.Key.Key_Right)
    assert session.selected_cell == (2, 1) and session.selected_stage == "weights"
    for _ in range(6):  # stops at the last row
        qtbot.keyClick(graphics, Qt.Key.Key_Down)
    assert session.selected_cell == (3, 1)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_focused_stage_view_is_framed_in_the_highlight_colour(window, qtbot, theme):
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    window.prefs.theme = theme
    sized(window, qtbot, 1366, 768)
    graphics = window.stages.view("weights").graphics

    def edge_colour():
        image = graphics.grab().toImage()
        return image.pixelColor(0, image.height() // 2).name()

    window.stages.view("scores").graphics.setFocus()
    qtbot.waitUntil(lambda: window.stages.view("scores").graphics.hasFocus())
    unfocused = edge_colour()
    window.stages.keys.select_stage("weights")
    qtbot.waitUntil(graphics.hasFocus)
    highlight = QApplication.palette(graphics).color(QPalette.ColorRole.Highlight).name()
    qtbot.waitUntil(lambda: edge_colour() == highlight)
    assert unfocused != highlight


def test_the_token_limits_are_explained_where_they_bite(window, qtbot):
    from attention_explorer.ui.editing.token_strip import MAX_TOKENS

    strip, slider = window.tokens, window.controls.tokens
    assert f"{slider.maximum()}" in slider.toolTip() and f"{MAX_TOKENS}" in slider.toolTip()
    assert "impractical" in strip.query_row.add.toolTip()
    assert f"up to {slider.maximum()}" in strip.query_row.add.toolTip()
    assert strip.set_count(MAX_TOKENS)
    assert not strip.query_row.add.isEnabled()
    assert not strip.set_count(MAX_TOKENS + 1)  # refused, with the reason
    assert "impractical" in strip.message() and f"{slider.maximum()}" in strip.message()


def test_while_dragging_tokens_the_slider_strip_and_status_line_agree(window, qtbot):
    """A drag sends many values while traces are still being computed; after every step
    the slider's label, the token strip and the status line name the same count."""
    slider, strip = window.controls.tokens, window.tokens
    label = slider._label  # the number box superqt shows beside the slider
    for count in (70, 300, 1200, 1210, 1225, 1190, 1186):
        slider.setValue(count)  # what each mouse move of a drag does
        shown = (
            label.value(),
            int(strip.query_row.title.text().split("(")[1].rstrip(")")),
            int(window.status.size_label.text().split("×")[0]),
        )
        assert shown == (count, count, count)
        extra = strip.query_row.more.text()
        assert extra == f"… {count - len(strip.edits())} more" and len(strip.edits()) == 64
    qtbot.waitUntil(lambda: window.live.trace.n_queries == 1186, timeout=30000)
    assert window.status.size_label.text().startswith("1186×1186 tokens")


def test_the_examples_menu_names_the_tutorial_each_example_comes_from(window):
    from attention_explorer.ui.window.main_menus import example_source

    actions = [
        action
        for group in window.menus.examples.actions()
        if group.menu() is not None
        for action in group.menu().actions()
    ]
    causal = next(a for a in actions if a.text() == "Causal mask on the three-token example")
    cited = "“Attention Mechanism: The Heart of Transformers”, 6. Causal Masking and Padding Masks"
    assert example_source("causal-mask") == cited
    assert causal.toolTip() == f"From the tutorial {cited}"
    assert causal.statusTip().endswith(f"(from {cited})")
    sourced = [a for a in actions if a.toolTip().startswith("From the tutorial “")]
    assert len(sourced) >= 20  # every shipped tutorial example says where it comes from


def test_a_refused_edit_message_leaves_after_a_later_valid_edit(window, qtbot):
    bar = window.statusBar()
    window.controls.d_model.setValue(9)  # 2 heads do not divide 9: refused
    assert "not divisible" in bar.currentMessage()
    window.controls.temperature_box.setValue(2.0)  # a later edit that goes through
    assert window.session.config.temperature == 2.0
    assert "not divisible" not in bar.currentMessage()


def test_the_dark_theme_darkens_the_window_even_without_platform_support(window, qtbot):
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    window.prefs.theme = "dark"
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 80
    window.prefs.theme = "light"
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() > 170


def test_stage_captions_follow_the_theme(window, qtbot):
    """In the dark theme a caption is drawn in light text, in the light theme in dark text."""
    caption = window.findChild(type(window.stages.header), "caption_scores")

    def text_lightness() -> int:
        image = caption.grab().toImage()
        pixels = [
            image.pixelColor(x, y).lightness()
            for x in range(image.width())
            for y in range(image.height())
        ]
        background = image.pixelColor(0, 0).lightness()
        return max(pixels, key=lambda value: abs(value - background))

    window.prefs.theme = "dark"
    qtbot.waitUntil(lambda: text_lightness() > 170)
    window.prefs.theme = "light"
    qtbot.waitUntil(lambda: text_lightness() < 80)
    assert caption.font().bold()


def test_arrow_keys_alone_show_each_cell_arithmetic_in_the_panel(window, qtbot):
    """No mouse: Ctrl+] picks a view, arrows pick a cell, the Cell arithmetic panel explains it."""
    from attention_explorer.engine import explain

    sized(window, qtbot, 1366, 768)
    window.stages.keys.select_stage("scaled")
    graphics = window.stages.view("scaled").graphics
    qtbot.keyClick(graphics, Qt.Key.Key_Home)
    qtbot.keyClick(graphics, Qt.Key.Key_Down)
    qtbot.keyClick(window, Qt.Key.Key_BracketRight, Qt.KeyboardModifier.ControlModifier)
    assert window.session.selected_stage == "masked"
    qtbot.keyClick(window.stages.view("masked").graphics, Qt.Key.Key_Right)
    trace, head = window.live.trace, window.session.selected_head
    expected = explain(trace, "masked", head, 1, 1).text().splitlines()[0]
    assert window.session.selected_cell == (1, 1)
    assert window.arithmetic.text.toPlainText().splitlines()[0] == expected
