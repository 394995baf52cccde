"""Labels come from the config as it is now and from the catalogue, never from a stale copy:
the sizes in the banner and the walkthrough, kv heads only under grouped-query attention, the
editors following the key/value head of the selected head, the scaled view's caption, no head
on a shared stage's arithmetic, "token" on the inputs' axis, one View menu entry each."""

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from window_fixtures import RECOMPUTE_MS, choose, dialogs, window  # noqa: F401

from attention_explorer.engine import AttentionConfig, AttentionInputs, compute
from attention_explorer.session import History, Session, SessionData
from attention_explorer.ui.editing.matrix_panel import MatrixPanel
from attention_explorer.ui.pipeline.stage_panel import step_caption
from attention_explorer.ui.state.panel_context import PanelContext


def _direct(heads: int, kv_heads: int | None) -> SessionData:
    kv = kv_heads or heads
    rng = np.random.default_rng(1)
    config = AttentionConfig(mode="direct", heads=heads, d_model=2 * heads, kv_heads=kv_heads)
    inputs = AttentionInputs(
        Q=rng.normal(size=(heads, 3, 2)), K=rng.normal(size=(kv, 3, 2)), V=np.ones((kv, 3, 2))
    )
    return SessionData(tokens=("a", "b", "c"), config=config, inputs=inputs)


def _matrix_panel(qtbot, data):
    session = Session.from_data(data)
    panel = MatrixPanel(PanelContext.for_session(session))
    qtbot.addWidget(panel)
    panel.show()
    return session, panel


def _tab_texts(tabs) -> list[str]:
    return [tabs.tabText(i) for i in range(tabs.count())]


def test_value_tabs_say_kv_head_only_under_grouped_query_attention(qtbot):
    _, plain = _matrix_panel(qtbot, _direct(8, None))
    assert _tab_texts(plain._head_tabs["V"])[7] == "head 7"
    _, grouped = _matrix_panel(qtbot, _direct(4, 2))
    assert _tab_texts(grouped._head_tabs["V"]) == ["kv head 0", "kv head 1"]


def test_the_editors_follow_the_key_value_head_of_the_selected_head(qtbot):
    session, panel = _matrix_panel(qtbot, _direct(4, 2))  # heads 0, 1 -> kv 0; 2, 3 -> kv 1
    session.selected_head = 3
    assert panel._head_tabs["Q"].currentIndex() == 3
    assert panel._head_tabs["K"].currentIndex() == 1  # a group size of 1 would say 3
    assert panel._head_tabs["V"].currentIndex() == 1
    panel._head_tabs["K"].setCurrentIndex(0)  # the learner picks kv head 0
    assert session.selected_head == 0
    panel._head_tabs["K"].setCurrentIndex(1)
    assert session.selected_head == 2  # the first query head of kv head 1


def test_the_scaled_caption_says_d_k_or_its_value():
    assert step_caption("scaled", None) == "× 1/√d_k"
    rng = np.random.default_rng(0)
    config = AttentionConfig(mode="direct", heads=1, d_model=9, d_k=9)
    q = rng.normal(size=(1, 2, 9))
    trace = compute(AttentionInputs(Q=q, K=q, V=q), config)
    assert step_caption("scaled", trace) == "× 1/√9"
    hot = compute(AttentionInputs(Q=q, K=q, V=q), config.with_changes(temperature=2.0))
    assert step_caption("scaled", hot) == "× 1/√9\n÷ T=2"
    custom = compute(
        AttentionInputs(Q=q, K=q, V=q), config.with_changes(scale="custom", scale_factor=0.25)
    )
    assert step_caption("scaled", custom) == "× 0.25"


def test_after_heads_2_to_4_nothing_says_two_heads(qtbot, window):  # noqa: F811
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.heads, 4)
    assert window.session.config.heads == 4
    banner = window.banner.plain_text()
    assert "4 heads" in banner and "two heads" not in banner.lower()
    about = window.walkthrough.steps()[0]
    assert about.key == "about"
    assert "4 heads" in about.text and "two heads" not in about.text.lower()
    caption = window.stages.findChild(type(window.stages.header), "caption_scaled")
    assert caption.text().startswith("× 1/√2")  # d_k = 8 / 4


def test_the_shared_output_arithmetic_names_no_head(qtbot, window):  # noqa: F811
    window.session.selected_head = 1
    window.session.selected_stage = "output"
    window.session.selected_cell = (1, 0)
    window.show_cell_arithmetic()
    first = window.arithmetic.text.toPlainText().splitlines()[0]
    assert first.startswith("output[") and "(head" not in first
    window.session.selected_stage = "weights"
    assert "(head 1)" in window.arithmetic.text.toPlainText().splitlines()[0]


def test_the_input_map_axis_says_token_not_query(qtbot, window):  # noqa: F811
    window.stages.inputs_toggle.click()
    x = window.stages.view("X")
    qtbot.waitUntil(lambda: x.frame is not None)
    assert x.plot.getAxis("left").labelText == "token"
    assert window.stages.view("Q").plot.getAxis("left").labelText == "query"


def test_cell_arithmetic_is_listed_once_in_the_view_menu(window):  # noqa: F811
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    texts = [a.text().replace("&", "").split("\t")[0] for a in view.actions()]
    assert texts.count("Cell arithmetic") == 1
    shortcut = [a for a in window.findChildren(QAction) if a.shortcut().toString() == "Ctrl+I"]
    assert len(shortcut) == 1


def test_the_controls_offer_the_configs_labels(qtbot):
    from attention_explorer.engine.config import OPTIONS
    from attention_explorer.session import starter_session
    from attention_explorer.ui.editing.controls_panel import ControlsPanel

    session = Session.from_data(starter_session())
    panel = ControlsPanel(session, History(session))
    qtbot.addWidget(panel)
    for setting in ("mask", "scale", "normalizer", "positional", "mode"):
        combo = getattr(panel, setting)
        offered = {combo.itemData(i): combo.itemText(i) for i in range(combo.count())}
        assert offered == OPTIONS[setting], setting


def test_tooltips_say_kv_head_only_under_grouped_query_attention(qtbot):
    _, plain = _matrix_panel(qtbot, _direct(4, None))
    _, grouped = _matrix_panel(qtbot, _direct(4, 2))
    tips = []
    for panel in (plain, grouped):
        model = panel.editor("K", 1).model()
        tips.append(model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole))
    assert "K (head 1)" in tips[0] and "kv head" not in tips[0]
    assert "K (kv head 1)" in tips[1]
