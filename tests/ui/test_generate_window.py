# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""Model > Generate… in the real window on the shipped tiny-induction model: Ctrl+Shift+G opens
a non-modal window on the Model panel's model (without one it says so and offers the Model
panel); Run N copies a repeated list greedily and lists each step's chosen token, probability
and rank with the selected step's top 10; N Steps are Run N; the settings are remembered; a
long run shows progress and stops on Cancel keeping what it made; refusals are one line; no
label shows rich text; the window fits a 1366x768 screen."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from main_window_checks import open_example
from model_folders import bert_folder, load, model_window  # noqa: F401
from PySide6.QtCore import QObject, QSettings, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QLabel

import attention_explorer as ae
from attention_explorer.generation import stepper as stepper_module
from attention_explorer.session.examples import example_or_starter
from attention_explorer.ui.generate.generate_prefs import GeneratePreferences
from attention_explorer.ui.generate.generate_tables import percent, shown

TINY = "tiny-induction"
WORDS = "cat dog fox owl bee hen cat dog"  # a repeated list: greedy copies it
WAIT = 60000


def _launcher(window):
    return window.findChild(QObject, "generate_launcher")


def _open(qtbot, window):
    dialog = _launcher(window).show()
    qtbot.waitExposed(dialog)
    return dialog


def _click_and_wait(qtbot, dialog, button):
    state = dialog.state
    with qtbot.waitSignal(state.running, timeout=WAIT, check_params_cb=lambda busy: not busy):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _column(table, column):
    return [table.item(row, column).text() for row in range(table.rowCount())]


def test_ctrl_shift_g_opens_generate_and_without_a_model_offers_the_model_panel(
    qtbot, model_window
):
    window = model_window
    action = _launcher(window).action
    assert action.shortcut() == QKeySequence("Ctrl+Shift+G")
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Model")
    assert action in menu.actions()
    window.model_dock.hide()
    keys = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(window, Qt.Key.Key_G, keys)
    dialog = _launcher(window).dialog
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    panel = dialog.panel
    assert panel.model_note.text().startswith("No model is loaded. Load one in the Model panel")
    assert not panel.step_button.isEnabled() and not panel.run_button.isEnabled()
    assert panel.load_button.isVisible() and panel.load_button.text() == "Show the Model panel"
    qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    assert window.model_dock.isVisible() and window.context.model.loaded is None
    load(qtbot, window, TINY, WORDS)
    assert panel.model_note.text().startswith("tiny-induction: 2 layers × 1 heads")
    assert panel.step_button.isEnabled() and not panel.load_button.isVisible()
    assert panel.prompt_edit.text() == WORDS  # the Model panel's text to start from
    action.trigger()
    assert _launcher(window).dialog is dialog  # raised again, not rebuilt


def test_with_a_model_session_open_it_offers_to_load_that_model(qtbot, model_window):
    window = model_window
    open_example(qtbot, window, "tiny-induction-copy")
    window.model_dock.hide()
    dialog = _open(qtbot, window)
    panel = dialog.panel
    assert panel.load_button.text() == "Load tiny-induction"
    assert "Load tiny-induction (the open session's model)" in panel.model_note.text()
    with qtbot.waitSignal(window.context.model.events.loaded, timeout=WAIT):
        qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    assert window.model_dock.isVisible() and window.context.model.loaded.name == TINY
    text = example_or_starter("tiny-induction-copy").experiment["model"]["text"]
    assert panel.prompt_edit.text() == text and panel.run_button.isEnabled()


def test_run_n_copies_the_list_with_each_steps_token_probability_rank_and_top_10(
    qtbot, model_window
):
    load(qtbot, model_window, TINY, WORDS)
    dialog = _open(qtbot, model_window)
    panel = dialog.panel
    panel.temperature_spin.setValue(0)
    panel.steps_spin.setValue(4)
    assert panel.run_button.text() == "Run 4 steps"
    assert not panel.seed_spin.isEnabled()  # greedy: the seed does not matter
    _click_and_wait(qtbot, dialog, panel.run_button)
    expected = ae.generate(TINY, WORDS, 4)
    assert dialog.state.generation.ids == expected.ids
    table = panel.steps_table
    assert _column(table, 2) == ["fox", "owl", "bee", "hen"]  # the list, copied
    assert _column(table, 0) == ["0", "1", "2", "3"]  # counted from 0, as the cache view and API
    assert _column(table, 1)[0] == "dog (7)"  # the prompt's last token asked first
    assert _column(table, 3) == [percent(s.probability) for s in expected.steps]
    assert _column(table, 4) == ["1"] * 4  # greedy: the model's first choice
    assert panel.text_line.text() == "Generated after the prompt: fox · owl · bee · hen"
    # the newest step is selected; its top 10 by the model's probability, the chosen in bold
    top = panel.top_table
    assert top.rowCount() == 10 and top.columnCount() == 3  # no "drawn with" when greedy
    last = expected.steps[-1]
    assert top.item(0, 1).text() == "hen  ◀ chosen" and top.item(0, 1).font().bold()
    assert _column(top, 2) == [percent(p) for _, p in last.top(10)]
    assert percent(0.0001) == "<0.1%" and percent(0.0) == "0.0%" and percent(0.5) == "50.0%"
    assert "Step 3" in panel.top_title.text() and "“bee” (position 10)" in panel.top_title.text()
    table.selectRow(0)  # another step chosen: the state and the top 10 follow
    assert dialog.state.selected_step == 0
    assert top.item(0, 1).text() == "fox  ◀ chosen" and "Step 0" in panel.top_title.text()


def test_n_steps_are_run_n_and_a_changed_setting_starts_again(qtbot, model_window):
    load(qtbot, model_window, TINY, WORDS)
    dialog = _open(qtbot, model_window)
    panel = dialog.panel
    panel.temperature_spin.setValue(1.5)
    panel.top_k_spin.setValue(3)
    panel.seed_spin.setValue(7)
    for _ in range(3):
        _click_and_wait(qtbot, dialog, panel.step_button)
    expected = ae.generate(TINY, WORDS, 3, temperature=1.5, top_k=3, seed=7)
    assert dialog.state.generation.ids == expected.ids and panel.steps_table.rowCount() == 3
    for mine, made in zip(dialog.state.generation.steps, expected.steps):
        assert np.array_equal(mine.probs, made.probs)
    assert panel.top_table.columnCount() == 4  # sampled: what the token was drawn with
    drawn = _column(panel.top_table, 3)
    assert drawn[3:] == ["0.0%"] * 7  # top-k 3 cut the rest off
    assert not panel.hint.isVisible()
    panel.seed_spin.setValue(8)
    assert panel.hint.isVisible() and "starts again" in panel.hint.text()
    _click_and_wait(qtbot, dialog, panel.step_button)
    assert panel.steps_table.rowCount() == 1  # a new generation from the prompt


def test_the_settings_are_remembered(qtbot, model_window, tmp_path):
    load(qtbot, model_window, TINY, WORDS)
    dialog = _open(qtbot, model_window)
    panel = dialog.panel
    panel.steps_spin.setValue(3)
    panel.temperature_spin.setValue(0.7)
    panel.top_k_spin.setValue(5)
    panel.top_p_spin.setValue(0.9)
    panel.seed_spin.setValue(42)
    _click_and_wait(qtbot, dialog, panel.run_button)
    dialog.close()
    prefs = GeneratePreferences.load(model_window.settings)
    assert (prefs.steps, prefs.temperature, prefs.top_k, prefs.top_p, prefs.seed) == (
        3,
        0.7,
        5,
        0.9,
        42,
    )
    other = QSettings(str(tmp_path / "bad.ini"), QSettings.Format.IniFormat)
    other.setValue("generate/temperature", "hot")
    other.setValue("generate/steps", -4)
    assert GeneratePreferences.load(other) == GeneratePreferences()  # defaults, not errors


def test_a_long_run_shows_progress_and_cancel_keeps_what_it_made(qtbot, model_window, monkeypatch):
    load(qtbot, model_window, TINY, WORDS)
    dialog = _open(qtbot, model_window)
    panel = dialog.panel
    real = stepper_module.Stepper.step

    def slow(self):  # a model slow enough to press Cancel during the run
        time.sleep(0.05)
        return real(self)

    monkeypatch.setattr(stepper_module.Stepper, "step", slow)
    panel.steps_spin.setValue(16)
    progress = []
    dialog.state.progress.connect(lambda done, total: progress.append((done, total)))
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    qtbot.waitUntil(lambda: len(progress) >= 2, timeout=WAIT)
    assert panel.progress.isVisible()
    with qtbot.waitSignal(dialog.state.running, timeout=WAIT):
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    made = panel.steps_table.rowCount()
    assert 2 <= made < 16 and progress[-1][1] == 16
    assert panel.message.text() == f"Stopped after {made} of 16 steps."
    assert dialog.state.generation.ids == ae.generate(TINY, WORDS, made).ids
    assert not panel.progress.isVisible() and panel.run_button.isEnabled()


def test_refusals_are_one_line_and_keep_what_was_made(qtbot, model_window):
    load(qtbot, model_window, TINY, WORDS)
    dialog = _open(qtbot, model_window)
    panel = dialog.panel
    panel.temperature_spin.setValue(0)
    panel.steps_spin.setValue(20)  # 8 prompt tokens + 20 steps > 24 learned positions
    _click_and_wait(qtbot, dialog, panel.run_button)
    assert panel.steps_table.rowCount() == 17
    message = panel.message.text()
    assert message == (
        "Stopped after 17 of 20 steps: tiny-induction has 24 learned positions; a prompt of "
        "8 tokens and 18 steps need 25 (at most 17 fit)"
    )
    assert "Traceback" not in message and panel.message.styleSheet() != ""
    panel.prompt_edit.setText("   ")
    _click_and_wait(qtbot, dialog, panel.run_button)
    assert "empty" in panel.message.text() and panel.steps_table.rowCount() == 17


def test_no_label_shows_rich_text_and_the_window_fits_1366x768(qtbot, model_window):
    load(qtbot, model_window, TINY, WORDS)
    dialog = _open(qtbot, model_window)
    _click_and_wait(qtbot, dialog, dialog.panel.run_button)
    labels = [label for label in dialog.findChildren(QLabel) if label.buddy() is None]
    assert len(labels) > 5  # every label but the forms' fixed names ("Steps", "Seed"…)
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
    # a token whose text looks like markup is shown as those characters
    generation = dialog.state.generation
    odd = replace(generation.steps[0], text="<b>bold</b>")
    table = dialog.panel.steps_table
    table.show_generation(replace(generation, steps=(odd,)), 0)
    assert table.item(0, 2).text() == "<b>bold</b>"
    assert shown(" ") == "␣" and shown("\n") == "↵" and shown("") == "(empty)"
    hint = dialog.minimumSizeHint()
    assert hint.width() <= 1366 and hint.height() <= 700, hint


def test_the_kv_cache_tab_opens_the_selected_steps_layer_in_the_window(qtbot, model_window):
    load(qtbot, model_window, TINY, WORDS)
    dialog = _open(qtbot, model_window)
    panel = dialog.panel
    panel.temperature_spin.setValue(0)
    panel.steps_spin.setValue(3)
    _click_and_wait(qtbot, dialog, panel.run_button)
    panel.tabs.setCurrentWidget(dialog.cache_view)
    assert panel.tabs.tabText(panel.tabs.currentIndex()) == "KV cache"
    panel.steps_table.selectRow(1)  # the cache view follows the step chosen in the tokens
    with qtbot.waitSignal(dialog.opener.opened, timeout=WAIT) as opened:
        qtbot.mouseClick(dialog.cache_view.open_button, Qt.MouseButton.LeftButton)
    data = opened.args[0]
    assert model_window.session.data().tokens == data.tokens  # the main window shows it
    assert data.tokens == ("fox",)  # step 1's query: the token step 0 wrote, fed back


def test_an_encoder_is_named_as_such_and_cannot_be_stepped(qtbot, model_window, bert_folder):
    load(qtbot, model_window, bert_folder, "the cat sat on the mat")
    dialog = _open(qtbot, model_window)
    panel = dialog.panel
    assert "is an encoder" in panel.model_note.text()
    assert "load a decoder" in panel.model_note.text()
    assert not panel.step_button.isEnabled() and not panel.run_button.isEnabled()
    load(qtbot, model_window, TINY, WORDS)
    assert panel.step_button.isEnabled() and panel.run_button.isEnabled()


def test_closing_the_window_lets_go_of_its_steppers_and_step_works_after_reopening(
    qtbot, model_window
):
    load(qtbot, model_window, TINY, WORDS)
    dialog = _open(qtbot, model_window)
    _click_and_wait(qtbot, dialog, dialog.panel.step_button)
    assert dialog.state._steppers  # Step keeps its stepper (and its weights) for the next Step
    dialog.close()
    assert dialog.state._steppers == ()  # closed: nothing holds the converted weights
    dialog = _open(qtbot, model_window)
    _click_and_wait(qtbot, dialog, dialog.panel.step_button)
    assert dialog.state._steppers and dialog.panel.steps_table.rowCount() == 1
    expected = ae.generate(TINY, WORDS, 1)
    assert dialog.state.generation.ids == expected.ids
