# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""The whole model follows an edit of a model layer (issue 18.2): every edit recomputes the
rest of that layer, every later layer and the output off the UI thread; the overview shows
Edited, Original or Difference with unchanged layers marked; the Output panel shows the
prediction before and after; knockouts are one undo step each and drawn crossed."""

from __future__ import annotations

import numpy as np
from model_folders import (  # noqa: F401 - fixtures pytest finds here
    TEXT,
    bert_folder,
    gpt2_folder,
    load,
    minilm_folder,
    model_window,
    open_head,
)

from attention_explorer import pretrained
from attention_explorer.pretrained import model_run

RUN_MS = 60000


def ran(qtbot, window):
    """Wait until the model run of the latest request is shown."""
    live = window.model_live
    qtbot.waitUntil(
        lambda: live.edited is not None and live.runner.request_id == live.shown_request,
        timeout=RUN_MS,
    )
    return live


def edit_w_q(window, factor=3.0, cell=None):
    inputs = window.session.inputs
    w_q = inputs.W_Q.copy()  # [d_model, heads*d_k]
    if cell is None:
        w_q *= factor
    else:
        w_q[cell] = factor
    with window.history.transaction("Edit W_Q"):
        window.session.inputs = inputs.with_array("W_Q", w_q)


def test_an_edit_runs_the_rest_of_the_model(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 1, 0)
    live = ran(qtbot, window)
    assert live.edited is live.original  # nothing edited yet: the model's own run
    assert window.output_dock.isVisible()
    edit_w_q(window)
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    want = model_run(gpt2_folder, TEXT, edits={1: window.session.data()})
    np.testing.assert_allclose(live.edited.attentions, want.attentions, atol=1e-5)
    np.testing.assert_allclose(live.edited.logits, want.logits, atol=1e-4)
    assert live.edited.recomputed_from == 1  # layer 0 was reused
    overview = window.model_panel.overview
    np.testing.assert_allclose(overview.weights, want.attentions, atol=1e-5)
    assert overview.unchanged_labels() == 1  # layer 0 before the edited one
    window.model_panel.show_box.setCurrentText("Difference")
    diff = want.attentions - live.original.attentions
    np.testing.assert_allclose(overview.weights, diff, atol=1e-5)
    assert overview.levels[1] == -overview.levels[0] > 0
    assert np.allclose(overview.weights[0], 0.0)
    window.model_panel.show_box.setCurrentText("Original")
    np.testing.assert_allclose(overview.weights, live.original.attentions, atol=1e-6)


def test_the_output_panel_shows_the_prediction_before_and_after(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 0, 1)
    live = ran(qtbot, window)
    output = window.model_output
    assert output.mode() == "decoder"
    n = len(live.edited.tokens)
    assert output.position.value() == n - 1  # the last position by default
    assert "Edit a number or knock out a head" in output.kind.text()  # nothing edited yet
    edit_w_q(window, factor=5.0)
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    ran(qtbot, window)
    assert output.kind.text().endswith("after the edit.")
    table = output.table
    top = live.edited.top_tokens(n - 1, 10)
    before = np.exp(live.original.log_probs(n - 1))
    for row, (token, index, p) in enumerate(top):
        assert table.item(row, 0).text() == token
        assert table.item(row, 1).text() == f"{100 * p:.1f}%"
        assert table.item(row, 2).text() == f"{100 * before[index]:.1f}%"
    was_top, was_index, _ = live.original.top_tokens(n - 1, 1)[0]
    if was_index in {index for _, index, _ in top}:
        assert table.rowCount() == 10
    else:  # the old favourite fell out of the top 10: one more row shows where it went
        assert table.rowCount() == 11
        assert table.item(10, 0).text() == f"{was_top} (top before)"
        now = np.exp(live.edited.log_probs(n - 1)[was_index])
        assert table.item(10, 1).text() == f"{100 * now:.1f}%"
    strip = output.strip.values  # [2, n - 1]: before, after
    np.testing.assert_allclose(strip[0], np.exp(live.original.next_token_log_probs()))
    np.testing.assert_allclose(strip[1], np.exp(live.edited.next_token_log_probs()))
    output.position.setValue(2)
    assert table.item(0, 0).text() == live.edited.top_tokens(2, 1)[0][0]
    moved = output.moved.values  # [layers + 1, n]
    assert np.allclose(moved[:1], 0.0) and moved[1:].max() > 0  # layer 0 edited: from there on


def test_a_knockout_is_one_undo_step_and_drawn_crossed(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 1, 0)
    live = ran(qtbot, window)
    menu = window.knockouts.menu(2, 3)
    assert menu.actions()[0].text() == "Knock out layer 2 head 3"
    menu.actions()[0].trigger()
    assert window.history.undo_label == "Knock out layer 2 head 3"
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    ran(qtbot, window)
    want = model_run(gpt2_folder, TEXT, knockout=[(2, 3)])
    np.testing.assert_allclose(live.edited.logits, want.logits, atol=1e-4)
    overview = window.model_panel.overview
    assert overview.marked_crosses() == 1 and overview.unchanged_labels() == 2
    assert window.knockouts.menu(2, 3).actions()[0].text() == "Restore layer 2 head 3"
    window.history.undo()
    qtbot.waitUntil(lambda: live.edited is live.original, timeout=RUN_MS)
    assert overview.marked_crosses() == 0
    assert not window.knockouts.toggle(9, 0)  # no such layer: refused, nothing changes
    assert window.knockouts.pairs() == ()


def test_stale_runs_are_dropped(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 2, 0)
    live = ran(qtbot, window)
    shown = []
    live.runner.ready.connect(lambda o, e, request: shown.append(request))
    for factor in (2.0, 3.0, 4.0, 5.0):
        edit_w_q(window, factor=factor, cell=(0, 0))
        live.request()
    ran(qtbot, window)  # the latest request's run is shown
    assert live.edited.edits[2].inputs.W_Q[0, 0] == 5.0
    assert len(shown) < 5  # the worker took only the latest of a burst


def test_a_masked_lm_predicts_at_mask(qtbot, model_window, bert_folder):
    window = model_window
    load(qtbot, window, bert_folder, "the cat [MASK] on the mat")
    open_head(qtbot, window, 0, 0)
    live = ran(qtbot, window)
    output = window.model_output
    assert output.mode() == "mlm"
    position = live.edited.tokens.index("[MASK]")
    assert output.position.value() == position
    assert output.table.item(0, 0).text() == live.edited.top_tokens(position, 1)[0][0]
    assert not output.strip.isVisible()


def test_minilm_compares_embeddings_and_says_it_has_no_head(qtbot, model_window, minilm_folder):
    window = model_window
    load(qtbot, window, "all-MiniLM-L6-v2", "The cat sat on the mat.")
    open_head(qtbot, window, 3, 2)
    assert window.model_panel.model_edit.text() == "all-MiniLM-L6-v2"  # not its folder
    live = ran(qtbot, window)
    output = window.model_output
    assert output.mode() == "embedding"
    assert "no output head" in output.kind.text() and not output.table.isVisible()
    qtbot.waitUntil(lambda: output.second_embedding is not None, timeout=RUN_MS)
    assert "before" in output.similarity.text()
    edit_w_q(window, factor=4.0)
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    ran(qtbot, window)
    second = model_run(minilm_folder, output.second.text()).embedding()
    after = live.edited.embedding()
    want = after @ second / np.linalg.norm(after) / np.linalg.norm(second)
    assert f"after {want:.4f}" in output.similarity.text()


def test_which_heads_matter_maps_every_head_and_exports(qtbot, model_window, gpt2_folder, tmp_path):
    window = model_window
    load(qtbot, window, gpt2_folder)
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles.index("&Model") == titles.index("&Help") - 1
    window.sweep.action.trigger()
    dialog = window.sweep.dialog
    with qtbot.waitSignal(dialog.worker.finished, timeout=RUN_MS) as done:
        dialog.start(confirmed=True)
    result = done.args[0]
    want = pretrained.knockout_sweep(gpt2_folder, TEXT)
    np.testing.assert_allclose(result.changes, want, atol=1e-4)
    frame = dialog.map.frame
    assert frame.shape == (3, 4) and frame.levels[1] == -frame.levels[0] > 0
    np.testing.assert_allclose(frame.image, want, atol=1e-4)
    assert "largest change" in dialog.note.text()
    path = tmp_path / "sweep.png"
    assert dialog.export(str(path)) and path.stat().st_size > 1000
    dialog.close()


def test_a_sweep_can_be_cancelled(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    window.sweep.action.trigger()
    dialog = window.sweep.dialog

    class CancelledAfterTwoHeads:  # as if Cancel were pressed during the third head
        asked = 0

        def clear(self):
            pass

        def set(self):
            pass

        def is_set(self):
            self.asked += 1
            return self.asked > 2

    dialog.worker.cancel = CancelledAfterTwoHeads()
    with qtbot.waitSignal(dialog.worker.failed, timeout=RUN_MS) as failed:
        dialog.start(confirmed=True)
    assert "cancelled" in failed.args[0]
    assert dialog.map.frame is None and dialog.start_button.isEnabled()
    dialog.close()


def test_the_all_heads_grid_knocks_out_the_open_layers_heads(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 1, 0)
    ran(qtbot, window)
    grid, knockouts = window.heads_grid, window.knockouts
    centre = grid.head_box(3).sceneBoundingRect().center()
    assert grid.head_at(centre) == 3
    assert knockouts.menu(knockouts.open_layer(), 3).actions()[0].text() == (
        "Knock out layer 1 head 3"
    )
    assert knockouts.toggle(1, 3)
    assert grid.crossed_count() == 1
    qtbot.waitUntil(lambda: window.model_panel.overview.marked_crosses() == 1, timeout=RUN_MS)
    window.history.undo()
    assert grid.crossed_count() == 0


def test_the_old_favourite_stays_in_the_table_when_it_falls_out(qtbot, model_window):
    window = model_window
    load(qtbot, window, "tiny-induction", "owl duck frog cat bee owl duck frog cat bee")
    open_head(qtbot, window, 1, 0)
    live = ran(qtbot, window)
    table = window.model_output.table
    assert table.rowCount() == 10 and table.item(0, 0).text() == "owl"  # the copy: owl next
    window.knockouts.toggle(1, 0)  # the induction head: the copy breaks
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    ran(qtbot, window)
    assert table.rowCount() == 11 and table.item(10, 0).text() == "owl (top before)"
    assert table.item(10, 2).text() == "100.0%" and table.item(10, 3).text().startswith("−")
