"""The stage catalogue is the one description of a stage: a stage added there (and only
there) appears in the stage panel, the exports and the cell arithmetic."""

from __future__ import annotations

import os
from dataclasses import replace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

from attention_explorer.core import stage_rules, stages
from attention_explorer.engine import AttentionConfig, AttentionInputs, compute
from attention_explorer.engine.explain import builder_names, explain
from attention_explorer.exporting.figure import stage_figure
from attention_explorer.exporting.numbers import csv_text
from attention_explorer.exporting.stages import aliases, resolve_stage
from attention_explorer.writing.export_errors import ExportError

NEW = stages.Stage(
    "X_norm",
    "normalised input",
    "X / rms(X)",
    False,
    "tokens",
    "dimension",
    "free",
    "mean",
    group="inputs",
    when="projection",
    caption="RMS\nnorm",
    explain="typed",
    aliases=("normed",),
    short="X̂",
)


@pytest.fixture
def with_new_stage():
    """The catalogue with NEW inserted after X (in place: every reader sees it), restored."""
    saved = dict(stages.CATALOGUE)
    order = list(saved.items())
    order.insert(1, (NEW.name, NEW))
    stages.CATALOGUE.clear()
    stages.CATALOGUE.update(order)
    yield NEW
    stages.CATALOGUE.clear()
    stages.CATALOGUE.update(saved)


def _trace(extra: bool = True):
    rng = np.random.default_rng(0)
    config = AttentionConfig(mode="projection", heads=2, d_model=4)
    inputs = AttentionInputs(
        X=rng.normal(size=(3, 4)),
        W_Q=rng.normal(size=(4, 4)),
        W_K=rng.normal(size=(4, 4)),
        W_V=rng.normal(size=(4, 4)),
        W_O=rng.normal(size=(4, 4)),
    )
    trace = compute(inputs, config, tokens=("a", "b", "c"), dtype="float64")
    if not extra:
        return trace
    x = trace["X"]  # [n, d_model]
    normed = x / np.sqrt((x**2).mean(axis=1, keepdims=True))  # [n, d_model]
    return replace(trace, stages={**trace.stages, "X_norm": normed})


def test_every_rule_and_builder_the_catalogue_names_exists():
    assert stage_rules.unknown_rules() == []
    for name, entry in stages.CATALOGUE.items():
        assert not entry.explain or entry.explain in builder_names(), name
        assert entry.caption, name  # every stage has an arrow caption
    assert stages.panel_stages("inputs")[:1] == ("X",)


def test_a_new_stage_appears_in_explain_and_export(with_new_stage):
    trace = _trace()
    cell = explain(trace, "X_norm", 0, 1, 2)
    assert cell.value == pytest.approx(trace["X_norm"][1, 2])
    assert cell.steps and "X_norm is an input" in cell.steps[0].title
    assert "(head" not in cell.headline  # a shared stage names no head
    assert aliases()["normed"] == "X_norm"
    assert resolve_stage(trace, "normed") == "X_norm"
    figure = stage_figure(trace, "X_norm")
    assert figure.title.startswith("normalised input")
    assert (figure.row_axis, figure.col_axis) == ("tokens", "dimension")
    assert csv_text(trace, "X_norm", None).startswith("tokens \\ dimension,0,1,2,3")
    direct = replace(trace, config=trace.config.with_changes(mode="direct"))
    assert "X_norm" in stage_rules.hidden_stages(direct)  # its rule: projection mode only
    with pytest.raises(ExportError, match="not part of this trace"):
        resolve_stage(_trace(extra=False), "X_norm")


def test_a_new_stage_appears_in_the_stage_panel(with_new_stage, qtbot):
    from attention_explorer.session import Session
    from attention_explorer.session.starter import starter_session
    from attention_explorer.ui.pipeline.stage_panel import StagePanel, input_group
    from attention_explorer.ui.state.live_trace import LiveTrace
    from attention_explorer.ui.state.preferences import ViewPreferences

    session = Session.from_data(starter_session())
    live = LiveTrace(session)
    panel = StagePanel(session, live, ViewPreferences())
    qtbot.addWidget(panel)
    panel.resize(1400, 1200)
    panel.show()
    live.recompute_now()
    trace = live.trace
    x = trace["X"]
    live.updated.emit(replace(trace, stages={**trace.stages, "X_norm": x * 2}))
    assert "X_norm" in panel.views() and "X_norm" in input_group()
    assert list(panel.views())[:2] == ["X", "X_norm"]  # in catalogue order
    assert "X_norm" in panel.shown_stages()
    caption = panel.findChild(type(panel.header), "caption_X_norm")
    assert caption.text() == "RMS\nnorm\n→"
    assert "X̂" in panel.inputs_toggle.text()
    qtbot.waitUntil(lambda: panel.view("X_norm").frame is not None)
    assert panel.view("X_norm").frame.heading.startswith("normalised input")
