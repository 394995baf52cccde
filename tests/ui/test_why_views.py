"""The four Why? views (ui/why/) drawn from made-up results of the causal tools: the patch
map's cells, hover words with the raw metric and clicks that ask to open a layer and head;
the logit lens's top tokens as plain text, its two shadings and the top 10 of a clicked cell;
attribution beside the knockout sweep; attention beside cause's head row, effects, scatter
and flags. The window test (test_why_window.py) runs them on a real model."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from psygnal import Signal, SignalGroup
from PySide6.QtCore import Qt

from attention_explorer.causal import AttributionResult, LensResult, PatchResult
from attention_explorer.pretrained.sweep import SweepResult
from attention_explorer.ui.why import cause_compute as cc
from attention_explorer.ui.why.attribution_view import AttributionView
from attention_explorer.ui.why.cause_view import CauseView
from attention_explorer.ui.why.lens_view import LensView
from attention_explorer.ui.why.patch_view import PatchView
from attention_explorer.ui.why.why_inputs import WhyInputs

TOKENS = ("a", "<i>b</i>", "c")


class _Events(SignalGroup):
    loaded = Signal(object)


def _state():
    """Model mode's state as the views read it, with no model loaded."""
    return SimpleNamespace(
        loaded=None, text="a b c", events=_Events(), session=SimpleNamespace(backend="numpy")
    )


def _patch(values, site="resid_pre"):
    values = np.asarray(values, np.float64)
    axis = "position" if site in ("resid_pre", "attn_out") else "head"
    return PatchResult(
        values=values,
        patched_metric=values * 4.0 - 2.0,  # clean 2, corrupted -2
        site=site,
        axes=("layer", axis),
        tokens=TOKENS,
        corrupted_tokens=("x", "y", "c"),
        answer="c",
        wrong="y",
        answer_id=2,
        wrong_id=1,
        clean_metric=2.0,
        corrupted_metric=-2.0,
        model="made-up",
        dtype="float64",
        seconds=0.5,
    )


@pytest.fixture
def views(qtbot):
    state = _state()
    inputs = WhyInputs(state)
    made = [PatchView(state, inputs), LensView(state, inputs), AttributionView(state, inputs)]
    made.append(CauseView(state, inputs))
    for view in [inputs, *made]:
        qtbot.addWidget(view)
        view.resize(900, 600)
    return SimpleNamespace(
        state=state, inputs=inputs, patch=made[0], lens=made[1], attribution=made[2], cause=made[3]
    )


def _shown(qtbot, view):
    """``view`` alone on screen (top-level windows overlap: a hover reaches the top one)."""
    view.show()
    qtbot.waitExposed(view)
    return view


def _click(qtbot, cell_map, row, col):
    qtbot.mouseClick(cell_map, Qt.MouseButton.LeftButton, pos=cell_map.cell_rect(row, col).center())


def test_the_patch_map_hovers_and_opens_the_clicked_layer(qtbot, views):
    view = _shown(qtbot, views.patch)
    view.show_result(_patch([[0.0, 0.5, 1.0], [0.25, -0.5, 2.0]]))
    assert view.map.values.tolist() == [[0.0, 0.5, 1.0], [0.25, -0.5, 2.0]]
    assert view.map.texts[1] == ["0.25", "−0.5", "2"]
    assert view.map.levels == (-2.0, 2.0)
    assert view.map.col_labels == ["0 a", "1 <i>b</i>", "2 c"]
    qtbot.mouseMove(view.map, view.map.cell_rect(0, 0).center())
    qtbot.mouseMove(view.map, view.map.cell_rect(1, 1).center())
    qtbot.waitUntil(lambda: view.map.last_hover.startswith("layer 1"))
    assert view.map.last_hover == (
        "layer 1, position 1 (<i>b</i> / corrupted y): patching resid_pre here restores −0.5 of "
        "the difference; logit[c] − logit[y] = −4 (clean 2, corrupted −2)"
    )
    assert "the largest effect: layer 1, position 2 (c) (2)" in view.summary.text().lower()
    with qtbot.waitSignal(view.open_requested) as opened:
        _click(qtbot, view.map, 1, 2)
    assert opened.args == [1, 0]  # a position map opens the layer at head 0
    view.show_result(_patch([[0.1, 0.9], [0.0, 0.3]], site="head_out"))
    assert view.map.levels == (-1.0, 1.0)  # never narrower than "all of it restored"
    assert view.map.col_labels == ["head 0", "head 1"]
    with qtbot.waitSignal(view.open_requested) as opened:
        _click(qtbot, view.map, 0, 1)
    assert opened.args == [0, 1]


def test_patching_without_a_model_or_prompts_says_what_is_missing(views):
    assert views.patch.start() is False
    assert views.patch.controls.note.text() == "Load a model in the Model panel first"
    assert views.cause.start() is False and views.lens.start() is False


def _lens():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 3, 5)) * 3  # [layers + 1, positions, vocab]
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    top_ids = np.argsort(-log_probs, axis=-1, kind="stable")  # [3, 3, 5]
    names = ["<b>x</b>", "y", "z", "w", "v"]
    return LensResult(
        log_probs=log_probs,
        top_ids=top_ids,
        top_probs=np.exp(np.take_along_axis(log_probs, top_ids, -1)),
        top_texts=tuple(tuple(tuple(names[t] for t in cell) for cell in row) for row in top_ids),
        tokens=TOKENS,
        ids=(0, 1, 2),
        model="made-up",
        dtype="float64",
        seconds=0.1,
    )


def test_the_lens_writes_each_cells_top_token_and_lists_its_best(qtbot, views):
    view, lens = _shown(qtbot, views.lens), _lens()
    view.show_result(lens)
    assert view.map.row_labels == ["embeddings", "after layer 0", "after layer 1"]
    top, p = lens.top_texts[1][2][0], lens.top_probs[1, 2, 0]
    assert view.map.texts[1][2] == f"{top}\n{p:.2f}"
    np.testing.assert_array_equal(view.map.shade, lens.top_probs[:, :, 0])
    view.shade_box.setCurrentIndex(view.shade_box.findData("rank"))
    np.testing.assert_allclose(view.map.shade, 1.0 / (lens.final_ranks() + 1.0))
    assert view.map.shade[-1].tolist() == [1.0, 1.0, 1.0]  # the last row is the answer itself
    _click(qtbot, view.map, 0, 1)
    lines = view.top.text().split("\n")
    assert lines[0] == "embeddings, position 1 (<i>b</i>):" and len(lines) == 6  # 5 tokens
    assert lines[1] == f" 1. {lens.top_texts[0][1][0]}   {lens.top_probs[0, 1, 0]:.4f}"
    assert view.top.textFormat() == Qt.TextFormat.PlainText


def test_attribution_sits_beside_the_knockout_sweep(qtbot, views):
    view = _shown(qtbot, views.attribution)
    values = np.array([[0.5, -1.5], [3.0, 0.0]])  # [layers, heads]
    attribution = AttributionResult(
        values=values,
        embed=1.0,
        attn_bias=np.zeros(2),
        mlp=np.zeros(2),
        norm_bias=0.0,
        head_bias=0.0,
        total=3.0,
        target="c",
        distractor="y",
        target_id=2,
        distractor_id=1,
        tokens=TOKENS,
        model="made-up",
        dtype="float64",
        seconds=0.1,
    )
    sweep = SweepResult(
        np.array([[-0.1, 0.2], [-4.0, 0.0]]), -0.3, "log-probability of c", 1.0, TOKENS
    )
    view.show_result((attribution, sweep))
    assert view.attribution_map.values.tolist() == values.tolist()
    assert view.attribution_map.levels == (-3.0, 3.0)
    assert view.sweep_map.values.tolist() == [[-0.1, 0.2], [-4.0, 0.0]]
    assert view.attribution_hover(1, 0).startswith(
        "layer 1, head 0: its output adds 3 to logit[c] − logit[y]"
    )
    assert view.sweep_hover(1, 0) == (
        "layer 1, head 0 knocked out: the log-probability of c changes by −4 (from −0.3)"
    )
    with qtbot.waitSignal(view.open_requested) as opened:
        _click(qtbot, view.sweep_map, 0, 1)
    assert opened.args == [0, 1]


def test_flags_name_heads_that_look_without_mattering_and_the_reverse():
    looks = np.array([[0.9, 0.05], [0.5, 0.0]])  # [layers, heads]
    effect = np.array([[0.02, 0.8], [0.6, -0.5]])
    assert cc.flags(looks, effect) == ([(0, 0)], [(0, 1), (1, 1)])
    attention = np.array([[[0.2, 0.3, 0.5]]])  # [1, 1, n]
    assert cc.attention_to(attention, (0, 2)).tolist() == [[0.7]]
    assert cc.attention_to(attention, ()).tolist() == [[0.0]]


def test_attention_beside_cause_shows_the_chosen_head_and_the_scatter(qtbot, views):
    view = _shown(qtbot, views.cause)
    attention = np.array([[[0.1, 0.0, 0.9], [0.0, 0.95, 0.05]], [[0.6, 0.3, 0.1], [0.0, 0.0, 1.0]]])
    sweep = SweepResult(
        np.array([[-1.0, 0.0], [-2.0, 0.0]]), -0.1, "log-probability of c", 1.0, TOKENS
    )
    patched = _patch([[0.02, 0.0], [0.8, 0.05]], site="head_out")
    sources = (1,)
    result = cc.CauseResult(
        attention, TOKENS, sources, cc.attention_to(attention, sources), patched, sweep
    )
    view.show_result(result)
    spots = {tuple(s.data()): (s.pos().x(), s.pos().y()) for s in view.scatter.points()}
    assert spots == {
        (0, 0): (0.0, 0.02),
        (0, 1): (0.95, 0.0),
        (1, 0): (0.3, 0.8),
        (1, 1): (0.0, 0.05),
    }
    assert "Look but do not matter" in view.flag_note.text()
    assert "L0H1" in view.flag_note.text().split("\n\n")[1]  # looks 0.95, restores 0
    assert view.flag_note.text().split("\n\n")[2].endswith("none")  # L1H0 looks at 0.3
    point = next(s for s in view.scatter.points() if tuple(s.data()) == (1, 0))
    view.scatter.sigClicked.emit(view.scatter, [point], None)
    assert (view.layer_spin.value(), view.head_spin.value()) == (1, 0)
    assert view.row_map.values.tolist() == [[0.6, 0.3, 0.1]]
    assert view.effects.text().split("\n") == [
        "Attention to the answer's source: 0.3",
        "Patching its output restores 0.8 of logit[c] − logit[y]",
        "Knocking it out changes the log-probability of c by −2",
    ]
    with qtbot.waitSignal(view.open_requested) as opened:
        _click(qtbot, view.row_map, 0, 2)
    assert opened.args == [1, 0]
