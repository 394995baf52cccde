"""Each stage drawn on screen (HeatmapView, offscreen) and in an export agrees: the same
title, colour levels, masked-cell look and printed numbers. A change to either side fails."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtGui import QImage

from attention_explorer.core.stage_colours import MASKED_RGB, MASKED_TEXT
from attention_explorer.engine import compute
from attention_explorer.exporting import export_stage
from attention_explorer.exporting.figure import stage_figure
from attention_explorer.exporting.painter import heatmap_rects
from attention_explorer.session.evented_session import Session
from attention_explorer.session.examples import load_example
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.heatmap.heatmap_view import HeatmapView
from attention_explorer.ui.state.preferences import ViewPreferences

STAGES = ["X", "Q", "K", "V", "scores", "scaled", "mask", "masked", "weights", "head_outputs"]
STAGES += ["concat", "output"]


def drawn_texts(view: HeatmapView) -> list[str]:
    """The numbers the view draws in its cells, in reading order."""
    return view.texts.drawn()


@pytest.fixture(scope="module")
def causal():
    """The starter: projection mode (X, Q, K, V), a causal mask, two heads."""
    data = starter_session()
    return data, compute(data.inputs, data.config, tokens=data.tokens, kv_tokens=data.kv_tokens)


def _screen(qtbot, data, trace, stage):
    view = HeatmapView(stage, Session.from_data(data), ViewPreferences())
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    view.set_trace(trace, trace.heads[0])
    qtbot.waitUntil(lambda: len(drawn_texts(view)) == len(view.frame.texts))
    return view


def _svg_texts(path) -> list[str]:
    return [e.text for e in ET.parse(path).getroot().iter() if e.text and e.text.strip()]


@pytest.mark.parametrize("stage", STAGES)
def test_screen_and_export_agree(qtbot, causal, stage, tmp_path):
    data, trace = causal
    if not trace.has(stage):
        pytest.skip(f"{stage} is not part of this example's trace")
    view = _screen(qtbot, data, trace, stage)
    head = trace.heads[0]
    fig = stage_figure(trace, stage, head)
    # the title: the same words (the window's title is the export's default title)
    assert fig.title == view.frame.heading
    assert view.title_bar.text() == view.frame.heading  # every word of it, on screen
    # the colour levels, on the picture's colour bar and the view's
    assert fig.levels == view.frame.levels
    assert tuple(view.bar.levels()) == pytest.approx(fig.levels)
    # the printed numbers: every number on screen is printed in the picture, in order
    screen = drawn_texts(view)
    assert screen, "the view shows its numbers at this size"
    svg = _svg_texts(export_stage(trace, stage, head, tmp_path / f"{stage}.svg", size=(1200, 900)))
    first = svg.index(screen[0])
    assert svg[first : first + len(screen)] == screen


def test_masked_cells_look_the_same_on_screen_and_in_pictures(qtbot, causal, tmp_path):
    data, trace = causal
    view = _screen(qtbot, data, trace, "masked")
    blocked = ~trace["mask"]  # [n, m]
    assert blocked.any()
    texts = np.array(drawn_texts(view)).reshape(blocked.shape)
    assert (texts[blocked] == MASKED_TEXT).all()
    overlay = view.masked_overlay.image  # [n, m, rgba] drawn over the heatmap
    assert tuple(overlay[blocked][0][:3]) == MASKED_RGB
    size, dpi = (1200, 900), 150
    path = export_stage(trace, "masked", trace.heads[0], tmp_path / "m.png", size=size, dpi=dpi)
    image = QImage(str(path))
    (rect,) = heatmap_rects(stage_figure(trace, "masked", trace.heads[0]), size, dpi)
    i, j = map(int, np.argwhere(blocked)[0])
    cw, ch = rect.width() / blocked.shape[1], rect.height() / blocked.shape[0]
    colour = image.pixelColor(int(rect.x() + (j + 0.12) * cw), int(rect.y() + (i + 0.12) * ch))
    assert (colour.red(), colour.green(), colour.blue()) == MASKED_RGB
    svg = _svg_texts(export_stage(trace, "masked", trace.heads[0], tmp_path / "m.svg"))
    assert svg.count(MASKED_TEXT) == int(blocked.sum())


def test_three_tokens_export_prints_the_exact_weights_by_default(tmp_path):
    data = load_example("three-tokens")
    trace = compute(data.inputs, data.config, tokens=data.tokens, kv_tokens=data.kv_tokens)
    texts = _svg_texts(export_stage(trace, "weights", 0, tmp_path / "w.svg"))
    assert "0.2483" in texts and "0.5035" in texts and "0.25" not in texts
    two = _svg_texts(export_stage(trace, "weights", 0, tmp_path / "w2.svg", decimals=2))
    assert "0.25" in two and "0.5" in two and "0.2483" not in two
