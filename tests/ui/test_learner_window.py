"""What a learner sees in the real window: Try it before / after, the banner following the
state, explored examples never asking to be saved, plain-text names, the temperature box,
derived d_k, and refused-edit messages that leave once an edit goes through."""

import numpy as np
from cell_typing import type_into_cell
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from window_fixtures import RECOMPUTE_MS, choose, dialogs, window  # noqa: F401

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stages import title as stage_title
from attention_explorer.session import resize, starter_session
from attention_explorer.ui.widgets import dialogs as message_boxes


def open_example(qtbot, window, key):  # noqa: F811
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example(key)


def click_try(qtbot, window):  # noqa: F811
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        qtbot.mouseClick(window.banner.try_button, Qt.MouseButton.LeftButton)


def test_try_it_shows_before_after_and_difference_then_undo_brings_the_question_back(
    qtbot,
    window,  # noqa: F811
):
    open_example(qtbot, window, "causal-mask")  # try: mask none
    banner = window.banner
    before = window.live.trace
    assert banner.try_button.isEnabled() and "Tried" not in banner.plain_text()
    window.session.selected_cell = (0, 0)  # row 0: the causal mask hides every key but one
    click_try(qtbot, window)
    after = window.live.trace
    text = banner.plain_text()
    assert "Tried: mask = none" in text
    assert not banner.try_button.isEnabled() and banner.try_button.text() == "Tried"
    head = window.session.selected_head
    old, new = before.stage("weights", head)[0], after.stage("weights", head)[0]
    assert not np.array_equal(old, new)
    line = next(row for row in text.splitlines() if row.startswith(stage_title("weights")))
    for value in (old[0], new[0], new[0] - old[0], new[1]):
        assert format_number(value, display=True) in line
    assert "scores" not in [row.split(" ")[0] for row in text.splitlines()]  # unchanged stage
    masked = next(row for row in text.splitlines() if row.startswith(stage_title("masked")))
    assert "shown" in masked and "∞, " not in masked.split("]")[-2]  # never "+∞" as a change
    window.history.undo()
    assert banner.try_button.isEnabled() and "Tried" not in banner.plain_text()


def test_an_explored_example_never_asks_to_be_saved_but_an_edit_does(
    qtbot,
    window,  # noqa: F811
    dialogs,  # noqa: F811
):
    open_example(qtbot, window, "scale-dk-4")
    click_try(qtbot, window)
    assert "*" not in window.windowTitle()
    open_example(qtbot, window, "causal-mask")
    assert dialogs == []
    with window.history.transaction("Rename"):
        window.session.name = "mine"
    open_example(qtbot, window, "scale-dk-4")
    assert [kind for kind, _ in dialogs] == ["question"]


def test_a_refused_try_is_said_in_the_banner_as_plain_text(qtbot, window):  # noqa: F811
    open_example(qtbot, window, "checkpoint-heads-not-dividing")
    qtbot.mouseClick(window.banner.try_button, Qt.MouseButton.LeftButton)
    assert "Engine says:" in window.banner.plain_text()
    assert window.session.config.heads == 4


def test_names_and_values_in_banner_and_editor_tooltips_are_plain_text(qtbot, window):  # noqa: F811
    name = "<img src=x>"
    data = starter_session().with_changes(
        tokens=(name, "b", "c", "d"),
        description="<b>not bold</b>",
        experiment={"question": "Is <i>this</i> literal?", "try": {"scale": "none"}},
    )
    window.document.replace(data)
    banner = window.banner.plain_text()
    assert "Is <i>this</i> literal?" in banner and "<b>not bold</b>" not in banner
    # the description is the About step's, shown escaped
    assert "&lt;b&gt;not bold&lt;/b&gt;" in window.walkthrough.steps()[0].text
    model = window.matrices.editor("X").model()
    shown = QTextDocument()
    for tip in (
        model.headerData(0, Qt.Orientation.Vertical, Qt.ItemDataRole.ToolTipRole),
        model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole),
    ):
        shown.setHtml(tip)  # how Qt renders a tooltip
        assert name in shown.toPlainText()


def test_temperature_has_a_number_box_and_clicks_give_round_values(qtbot, window):  # noqa: F811
    controls = window.controls
    controls.temperature_box.setValue(2.5)
    assert window.session.config.temperature == 2.5
    assert controls.temperature.value() == 2.5
    controls.temperature.setValue(3.007)
    assert window.session.config.temperature == 3.01
    assert controls.temperature_box.value() == 3.01
    window.history.undo()  # box and slider are one control: one undo step for both
    assert window.session.config.temperature == 1.0
    assert controls.temperature_box.value() == 1.0


def test_d_k_is_shown_as_derived_in_projection_mode(qtbot, window):  # noqa: F811
    controls = window.controls
    assert not controls.d_k.isVisible() and controls.d_k_derived.isVisible()
    assert controls.d_k_derived.text().startswith("4 ")
    choose(controls.heads, 4)
    assert controls.d_k_derived.text().startswith("2 ")
    choose(controls.mode, "direct")
    assert controls.d_k.isVisible() and not controls.d_k_derived.isVisible()


def test_a_refused_edit_message_leaves_after_a_later_valid_edit(qtbot, window):  # noqa: F811
    editor = window.matrices.editor("X")
    bar = window.statusBar()
    type_into_cell(qtbot, editor, 0, 0, "abc")
    assert "X[The, 0]" in bar.currentMessage()  # the row named as the editor labels it
    model = editor.model()
    assert model.setData(model.index(0, 1), "0.5")  # a later edit that goes through
    assert window.session.inputs.X[0, 1] == 0.5
    assert bar.currentMessage() == ""


def test_sigmoid_is_explained_per_cell(qtbot, window):  # noqa: F811
    data = resize.set_padding(starter_session(), 0)
    window.document.replace(
        data.with_changes(config=data.config.with_changes(normalizer="sigmoid"))
    )
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.live.recompute_now()
    step = next(s for s in window.walkthrough.steps() if s.key == "weights")
    assert "per cell" in step.plain() and "per row" not in step.plain()


def test_typing_q_in_projection_mode_offers_direct_mode_keeping_every_number(
    qtbot,
    window,  # noqa: F811
    monkeypatch,
):
    from PySide6.QtWidgets import QMessageBox

    before = window.live.trace
    asked = []

    def yes(*args, **kwargs):
        asked.append(args[2])
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(message_boxes, "question", yes)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.offer_direct_mode("K")
    after = window.live.trace
    assert "X W_K" in asked[0]
    assert window.session.config.mode == "direct"
    assert window.matrices.tab_names()[:3] == ["Q", "K", "V"]
    for stage in ("Q", "K", "V", "weights", "output"):
        np.testing.assert_allclose(after[stage], before[stage], rtol=1e-5, atol=1e-6)
    assert window.history.undo_label == "Switch to typing Q, K, V"
    window.history.undo()  # one step back to projection mode, with X and the weights
    assert window.session.config.mode == "projection"
    assert window.matrices.tab_names()[0] == "X"


def test_a_key_shows_the_selected_cells_arithmetic_in_a_panel(qtbot, window):  # noqa: F811
    from PySide6.QtGui import QAction, QKeySequence

    from attention_explorer.engine import explain

    window.session.selected_stage = "weights"
    window.session.selected_cell = (2, 1)
    action = next(a for a in window.findChildren(QAction) if a.shortcut() == QKeySequence("Ctrl+I"))
    action.trigger()
    assert window.arithmetic.isVisible()
    shown = window.arithmetic.text.toPlainText()
    trace = window.live.trace
    head = window.session.selected_head
    assert shown == explain(trace, "weights", head, 2, 1, max_terms=16).text()
    window.session.selected_cell = (3, 0)  # the keyboard moves the selection: the panel follows
    assert "weights[down, The]" in window.arithmetic.text.toPlainText()


def test_the_keyboard_cell_of_an_editor_is_framed_in_the_highlight_colour(qtbot, window):  # noqa: F811
    editor = window.matrices.editor("X")
    table = editor.table
    table.setFocus()
    index = editor.model().index(1, 1)
    table.clearSelection()  # the frame alone, not a selection colour, must show the cell
    table.selectionModel().setCurrentIndex(index, table.selectionModel().SelectionFlag.NoUpdate)
    qtbot.waitUntil(table.hasFocus)
    image = table.viewport().grab().toImage()
    rect = table.visualRect(index)
    highlight = table.palette().highlight().color()
    edge = image.pixelColor(rect.left() + 1, rect.center().y())
    assert abs(edge.red() - highlight.red()) + abs(edge.blue() - highlight.blue()) < 60


def test_plus_on_t1_t2_t3_adds_t4_and_heads_keep_the_weights(qtbot, window):  # noqa: F811
    open_example(qtbot, window, "three-tokens")
    qtbot.mouseClick(window.tokens.query_row.add, Qt.MouseButton.LeftButton)
    assert window.session.tokens == ("t1", "t2", "t3", "t4")
    open_example(qtbot, window, "checkpoint-heads-not-dividing")
    before = window.session.inputs
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.heads, 2)
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        np.testing.assert_array_equal(getattr(window.session.inputs, name), getattr(before, name))
    assert np.abs(window.live.trace["scores"]).max() < 20  # not 113 from random weights


def test_the_keyboard_cell_is_framed_in_the_dark_theme_too(qtbot, window):  # noqa: F811
    from PySide6.QtGui import QColor, QPalette

    editor = window.matrices.editor("X")
    table = editor.table
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#202020"))
    dark.setColor(QPalette.ColorRole.Highlight, QColor("#3daee9"))
    table.setPalette(dark)
    table.setFocus()
    qtbot.waitUntil(table.hasFocus)
    index = editor.model().index(2, 0)
    table.clearSelection()
    table.selectionModel().setCurrentIndex(index, table.selectionModel().SelectionFlag.NoUpdate)
    image = table.viewport().grab().toImage()
    rect = table.visualRect(index)
    edge = image.pixelColor(rect.left() + 1, rect.center().y())
    inside = image.pixelColor(rect.center())  # the cell's own tint

    def distance(a, b):
        return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())

    highlight = QColor("#3daee9")
    assert distance(edge, highlight) < 100 and distance(edge, highlight) < distance(
        inside, highlight
    )


def test_double_clicking_the_q_view_offers_direct_mode_and_opens_the_q_editor(
    qtbot,
    window,  # noqa: F811
    monkeypatch,
):
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(message_boxes, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.stages.view("V").edit_requested.emit(1, 0)  # what a double-click on V emits
    assert window.session.config.mode == "direct"
    assert window.matrices.current_array() == "V"


def test_a_tried_experiment_opens_in_the_compare_view(qtbot, window):  # noqa: F811
    open_example(qtbot, window, "causal-mask")  # try: mask none
    banner = window.banner
    assert banner.compare_button.isHidden()  # nothing to compare before the change
    window.session.selected_stage = "weights"
    click_try(qtbot, window)
    assert banner.compare_button.isVisible()
    qtbot.mouseClick(banner.compare_button, Qt.MouseButton.LeftButton)
    compare = window.compare
    assert window.compare_dock.isVisible() and compare.stage == "weights"
    qtbot.waitUntil(lambda: "largest change" in compare.note.text(), timeout=10000)
    before = window.compare.views["original"].frame
    after = window.compare.views["edited"].frame
    assert before.image[0, 1] == 0 and after.image[0, 1] > 0  # causal, then no mask
