"""A gpt-oss layer in the stage panel (pytest-qt, offscreen): the sink's view is drawn beside
the weights with the trace's numbers in its one column, labelled ``sink``; an edit of the
session's sink logits repaints it."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import attention_explorer as ae  # noqa: E402
from attention_explorer.core.numbers import format_number  # noqa: E402
from tests.models.test_gpt_oss import make_gpt_oss  # noqa: E402

pytest.importorskip("transformers")

TEXT = "The cat sat on the mat"


@pytest.fixture(scope="module")
def oss_session(tmp_path_factory):
    """Layer 0 (sliding) of a tiny gpt-oss reading TEXT."""
    return ae.from_model(make_gpt_oss(tmp_path_factory.mktemp("gpt-oss-window")), TEXT, layer=0)


def test_the_sink_view_shows_the_sink_weight_and_follows_an_edit(qtbot, oss_session):
    from attention_explorer.session.evented_session import Session
    from attention_explorer.ui.pipeline.stage_panel import StagePanel
    from attention_explorer.ui.state.live_trace import LiveTrace
    from attention_explorer.ui.state.preferences import ViewPreferences

    session = Session.from_data(oss_session)
    live = LiveTrace(session)
    panel = StagePanel(session, live, ViewPreferences())
    qtbot.addWidget(panel)
    panel.resize(1600, 1000)
    panel.show()
    qtbot.waitExposed(panel)
    try:
        live.recompute_now()
        view = panel.views()["sink_weight"]
        assert view.frame is not None
        trace = ae.compute(oss_session)  # float32, as the window computes
        shares = trace["sink_weight"][0, :, 0]  # [n] head 0
        frame = view.frame
        assert frame.shape == (len(shares), 1) and frame.col_labels == ("sink",)
        np.testing.assert_allclose(frame.image.ravel(), shares, atol=1e-6)  # unit levels 0..1
        assert frame.texts == [format_number(float(x), frame.decimals) for x in shares]
        assert format_number(float(shares[0]), frame.decimals) in view.texts.drawn()
        sinks = np.array(session.inputs.sinks, dtype=np.float64)
        sinks[0] += 5.0  # head 0's sink now takes more of every row
        session.update(inputs=session.inputs.with_changes(sinks=sinks))
        live.recompute_now()
        qtbot.waitUntil(lambda: panel.views()["sink_weight"].frame is not None)
        after = panel.views()["sink_weight"].frame.image.ravel()
        assert np.all(after > shares)
        edited = ae.compute(session.data())["sink_weight"][0, :, 0]  # [n]
        np.testing.assert_allclose(after, edited, atol=1e-6)
    finally:
        live.shutdown()
