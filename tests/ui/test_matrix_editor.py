"""Matrix editors: typing, refusing bad text, undo, clipboard blocks, fill helpers, the panel."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from cell_typing import press_enter, type_into_cell  # noqa: E402
from PySide6.QtCore import QCoreApplication, QEvent, QItemSelectionModel, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget  # noqa: E402

from attention_explorer.engine import AttentionConfig, AttentionInputs  # noqa: E402
from attention_explorer.session import History, Session, SessionData, resize, starter_session  # noqa: E402
from attention_explorer.ui.editing.matrix_model import MatrixModel  # noqa: E402
from attention_explorer.ui.editing.matrix_panel import MatrixPanel  # noqa: E402
from attention_explorer.ui.state.panel_context import PanelContext  # noqa: E402
from attention_explorer.ui.state.preferences import ViewPreferences  # noqa: E402

TOKENS = ("The", "cat", "sat")


def direct_data() -> SessionData:
    """Two heads, three tokens, d_k 2, numbers that are easy to recognise."""
    q = np.arange(12, dtype=float).reshape(2, 3, 2) / 10  # [h, n, d_k]
    k = -np.arange(12, dtype=float).reshape(2, 3, 2) / 10
    v = np.ones((2, 3, 2))
    w_o = np.eye(4)
    config = AttentionConfig(mode="direct", heads=2, d_model=4)
    inputs = AttentionInputs(Q=q, K=k, V=v, W_O=w_o)
    return SessionData(tokens=TOKENS, config=config, inputs=inputs)


@pytest.fixture
def session():
    return Session.from_data(direct_data())


@pytest.fixture
def history(session):
    return History(session)


@pytest.fixture
def context(session, history):
    return PanelContext(session, history, ViewPreferences())


@pytest.fixture
def panel(qtbot, context):
    panel = MatrixPanel(context)
    qtbot.addWidget(panel)
    panel.resize(560, 320)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


@pytest.fixture
def q1(panel):
    """The editor of Q, head 1, shown and focused on its top-left cell."""
    panel.tabs.setCurrentIndex(panel.tab_names().index("Q"))
    editor = panel.editor("Q", 1)
    panel._head_tabs["Q"].setCurrentWidget(editor)
    editor.table.setFocus()
    editor.table.setCurrentIndex(editor.model().index(0, 0))
    return editor


# -- typing ------------------------------------------------------------------------------
def test_typing_a_number_changes_exactly_that_cell(qtbot, q1, session):
    before = session.inputs.Q.copy()
    type_into_cell(qtbot, q1, 2, 1, "0.5")
    expected = before.copy()
    expected[1, 2, 1] = 0.5
    assert np.array_equal(session.inputs.Q, expected)
    assert q1.model().data(q1.model().index(2, 1)) == "0.5"
    assert q1.message() == ""


def test_typing_without_f2_replaces_the_number_and_enter_moves_down(qtbot, q1, session):
    qtbot.keyClick(q1.table, "-")  # the first key opens the cell editor, replacing the text
    line = QApplication.focusWidget()
    assert isinstance(line, QLineEdit) and line.text() == "-"
    qtbot.keyClicks(line, "1.25")
    press_enter(qtbot, q1, line)
    assert session.inputs.Q[1, 0, 0] == -1.25
    assert q1.table.currentIndex().row() == 1
    assert q1.table.currentIndex().column() == 0


def test_arrows_and_tab_move_between_cells(qtbot, q1):
    qtbot.keyClick(q1.table, Qt.Key.Key_Right)
    assert (q1.table.currentIndex().row(), q1.table.currentIndex().column()) == (0, 1)
    qtbot.keyClick(q1.table, Qt.Key.Key_Down)
    assert q1.table.currentIndex().row() == 1
    qtbot.keyClick(q1.table, Qt.Key.Key_Return)
    assert q1.table.currentIndex().row() == 2
    q1.table.setCurrentIndex(q1.model().index(0, 0))
    qtbot.keyClick(q1.table, Qt.Key.Key_Tab)
    assert q1.table.currentIndex().column() == 0  # Tab leaves the table (issue 31.9)


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "1e31", ""])
def test_bad_text_is_refused_with_a_visible_message(qtbot, q1, session, history, text):
    before = session.inputs
    with qtbot.waitSignal(q1.model().input_error) as signal:
        type_into_cell(qtbot, q1, 1, 1, text)
    assert np.array_equal(session.inputs.Q, before.Q)
    assert session.inputs == before
    assert not history.can_undo
    assert q1.message_label.isVisible()
    assert "keeps its value" in q1.message() and "Q (head 1)[cat, 1]" in q1.message()
    assert signal.args[0] == q1.message()
    assert q1.table.currentIndex().row() == 1  # a refused edit does not move on


def test_the_message_clears_on_the_next_good_edit(qtbot, q1):
    type_into_cell(qtbot, q1, 0, 0, "abc")
    assert q1.message_label.isVisible()
    type_into_cell(qtbot, q1, 0, 0, "2")
    assert not q1.message_label.isVisible()
    assert q1.message() == ""


def test_panel_repeats_refusals_on_its_own_signal(qtbot, panel, q1):
    with qtbot.waitSignal(panel.input_error) as signal:
        type_into_cell(qtbot, q1, 0, 0, "1e31")
    assert "too large" in signal.args[0]


def test_undo_restores_the_exact_previous_matrix(qtbot, q1, session, history):
    before = session.inputs.Q.copy()
    type_into_cell(qtbot, q1, 0, 1, "0.123456789")
    assert session.inputs.Q[1, 0, 1] == 0.123456789
    assert history.undo_label == "Edit Q (head 1)[The, 1]"
    assert history.undo()
    assert np.array_equal(session.inputs.Q, before)
    assert q1.model().data(q1.model().index(0, 1)) == "0.7"
    assert history.redo()
    assert session.inputs.Q[1, 0, 1] == 0.123456789


def test_editing_shows_the_exact_number_so_enter_loses_nothing(qtbot, q1, session, history):
    session.inputs = session.inputs.with_array("Q", np.full((2, 3, 2), 1 / 3))
    q1.table.setCurrentIndex(q1.model().index(0, 0))
    qtbot.keyClick(q1.table, Qt.Key.Key_F2)
    line = q1.table.findChild(QLineEdit)
    assert line.text() == repr(1 / 3)
    steps = len(history._done)
    press_enter(qtbot, q1, line)
    assert session.inputs.Q[1, 0, 0] == 1 / 3
    assert len(history._done) == steps  # no change, no undo step


# -- clipboard ---------------------------------------------------------------------------
def test_ctrl_v_pastes_a_tab_separated_block_at_the_current_cell(qtbot, q1, session):
    QGuiApplication.clipboard().setText("1\t2\n3\t4\n")
    before = session.inputs.Q.copy()
    q1.table.setCurrentIndex(q1.model().index(1, 0))
    qtbot.keyClick(q1.table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    expected = before.copy()
    expected[1, 1:3, 0:2] = [[1, 2], [3, 4]]
    assert np.array_equal(session.inputs.Q, expected)
    assert q1.message() == ""


def test_numpy_style_text_pastes(qtbot, q1, session):
    QGuiApplication.clipboard().setText("[[9, 8], [7, 6]]")
    qtbot.keyClick(q1.table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert np.array_equal(session.inputs.Q[1, :2], [[9, 8], [7, 6]])


def test_a_block_too_big_is_clipped_with_a_message(qtbot, q1, session):
    q1.table.setCurrentIndex(q1.model().index(2, 1))
    assert q1.paste("5 6 7\n8 9 10")
    assert session.inputs.Q[1, 2, 1] == 5
    assert "Pasted 1x1 of the 2x3 block" in q1.message()


def test_a_bad_paste_changes_nothing_and_says_why(qtbot, q1, session, history):
    before = session.inputs
    QGuiApplication.clipboard().setText("1\t2\n3\tnan")
    qtbot.keyClick(q1.table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert session.inputs == before and not history.can_undo
    assert "row 2, column 2" in q1.message()


def test_one_number_pasted_over_a_selection_fills_it(qtbot, q1, session):
    selection = q1.table.selectionModel()
    flags = QItemSelectionModel.SelectionFlag.Select
    for row in range(3):
        selection.select(q1.model().index(row, 1), flags)
    assert q1.paste("0.25")
    assert np.array_equal(session.inputs.Q[1, :, 1], [0.25, 0.25, 0.25])


def test_ctrl_c_copies_the_selected_block_tab_separated(qtbot, q1, session):
    selection = q1.table.selectionModel()
    flags = QItemSelectionModel.SelectionFlag.Select
    for row, col in ((0, 0), (0, 1), (1, 0), (1, 1)):
        selection.select(q1.model().index(row, col), flags)
    qtbot.keyClick(q1.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    text = QGuiApplication.clipboard().text()
    assert text == "0.6\t0.7\n0.8\t0.9"
    rows = [[float(x) for x in line.split("\t")] for line in text.splitlines()]
    assert np.array_equal(rows, session.inputs.Q[1, :2, :2])


def test_delete_sets_the_selected_cells_to_zero(qtbot, q1, session):
    qtbot.keyClick(q1.table, Qt.Key.Key_Delete)
    assert session.inputs.Q[1, 0, 0] == 0.0
    assert session.inputs.Q[1, 0, 1] == 0.7


# -- fill helpers --------------------------------------------------------------------------
def test_zeros_identity_and_scale_do_what_they_say(qtbot, q1, session, history):
    q0_before = session.inputs.Q[0].copy()
    qtbot.mouseClick(q1.scale_button, Qt.MouseButton.LeftButton)
    assert np.allclose(session.inputs.Q[1], direct_data().inputs.Q[1] * 2)
    assert history.undo_label == "Scale Q (head 1) by 2"
    qtbot.mouseClick(q1.identity_button, Qt.MouseButton.LeftButton)
    assert np.array_equal(session.inputs.Q[1], [[1, 0], [0, 1], [0, 0]])
    qtbot.mouseClick(q1.zeros_button, Qt.MouseButton.LeftButton)
    assert np.array_equal(session.inputs.Q[1], np.zeros((3, 2)))
    assert np.array_equal(session.inputs.Q[0], q0_before)  # the other head is untouched
    history.undo()
    assert np.array_equal(session.inputs.Q[1], [[1, 0], [0, 1], [0, 0]])


def test_random_fill_with_the_same_seed_gives_the_same_numbers(qtbot, q1, session):
    q1.seed_spin.setValue(3)
    qtbot.mouseClick(q1.random_button, Qt.MouseButton.LeftButton)
    first = session.inputs.Q[1].copy()
    qtbot.mouseClick(q1.zeros_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(q1.random_button, Qt.MouseButton.LeftButton)
    assert np.array_equal(session.inputs.Q[1], first)
    assert np.count_nonzero(first) > 0
    q1.seed_spin.setValue(4)
    qtbot.mouseClick(q1.random_button, Qt.MouseButton.LeftButton)
    assert not np.array_equal(session.inputs.Q[1], first)


def test_scaling_past_the_limit_is_refused(qtbot, q1, session):
    session.inputs = session.inputs.with_array("Q", np.full((2, 3, 2), 1e29))
    before = session.inputs
    assert not q1.scale(1000.0)
    assert session.inputs == before
    assert "1e+30" in q1.message()


# -- model details ---------------------------------------------------------------------------
def test_headers_show_token_names_and_follow_renames(qtbot, panel, session):
    model = panel.editor("K", 0).model()
    labels = [
        model.headerData(i, Qt.Orientation.Vertical, Qt.ItemDataRole.DisplayRole) for i in range(3)
    ]
    assert labels == list(TOKENS)
    assert model.headerData(1, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole) == "1"
    session.tokens = ("A", "B", "C")
    assert model.headerData(2, Qt.Orientation.Vertical, Qt.ItemDataRole.DisplayRole) == "C"


def test_selected_cell_highlights_the_query_row_and_the_key_row(qtbot, panel, session):
    q, k = panel.editor("Q", 0).model(), panel.editor("K", 0).model()
    plain = q.data(q.index(1, 0), Qt.ItemDataRole.BackgroundRole).color()
    session.selected_cell = (1, 2)
    bold = Qt.ItemDataRole.FontRole
    assert q.headerData(1, Qt.Orientation.Vertical, bold).bold()
    assert q.headerData(2, Qt.Orientation.Vertical, bold) is None
    assert k.headerData(2, Qt.Orientation.Vertical, bold).bold()
    assert q.data(q.index(1, 0), Qt.ItemDataRole.BackgroundRole).color() != plain


def test_tints_follow_the_colour_map_and_text_stays_readable(qtbot, session, context):
    prefs = context.prefs
    model = MatrixModel(context, "Q", 0)
    low = model.data(model.index(0, 0), Qt.ItemDataRole.BackgroundRole).color()
    high = model.data(model.index(2, 1), Qt.ItemDataRole.BackgroundRole).color()
    assert low != high
    for i in range(3):
        for j in range(2):
            back = model.data(model.index(i, j), Qt.ItemDataRole.BackgroundRole).color()
            fore = model.data(model.index(i, j), Qt.ItemDataRole.ForegroundRole).color()
            assert abs(back.lightnessF() - fore.lightnessF()) > 0.35
    prefs.colormap = "magma"
    assert model.data(model.index(0, 0), Qt.ItemDataRole.BackgroundRole).color() != low
    model.detach()


def test_tooltips_name_the_cell_and_its_meaning(qtbot, panel):
    model = panel.editor("K", 1).model()
    tip = model.data(model.index(2, 0), Qt.ItemDataRole.ToolTipRole)
    assert "K (head 1)[2, 0] = -1" in tip and "'sat'" in tip  # no shared kv heads here


def test_weight_matrices_label_columns_by_head(qtbot, session, context):
    session.load(starter_session())
    model = MatrixModel(context, "W_Q")
    assert model.rowCount() == 8 and model.columnCount() == 8
    label = model.headerData(5, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
    assert label == "h1.1"
    model.detach()


# -- the panel -----------------------------------------------------------------------------
def test_panel_shows_q_k_v_per_head_in_direct_mode(panel):
    assert panel.tab_names() == ["Q", "K", "V", "W_O"]
    assert panel._head_tabs["Q"].count() == 2
    assert panel.editor("V", 1).model().matrix().shape == (3, 2)
    with pytest.raises(KeyError, match="no editor for X"):
        panel.editor("X")


def test_panel_rebuilds_when_the_mode_changes(qtbot, panel, session, history):
    with history.transaction("Mode"):
        new = resize.set_mode(session.data(), "projection")
        session.update(inputs=new.inputs, config=new.config)
    assert panel.tab_names() == ["X", "W_Q", "W_K", "W_V", "W_O"]
    x = panel.editor("X")
    assert x.model().rowCount() == 3 and x.model().columnCount() == 4
    history.undo()
    assert panel.tab_names() == ["Q", "K", "V", "W_O"]


def test_panel_shows_x_kv_in_cross_attention(qtbot, session, context):
    data = starter_session()
    cross = data.with_changes(
        config=data.config.with_changes(attention="cross"),
        kv_tokens=("a", "b"),
        inputs=data.inputs.with_array("X_kv", np.zeros((2, 8))),
    )
    session.load(cross)
    panel = MatrixPanel(context)
    qtbot.addWidget(panel)
    assert panel.tab_names() == ["X", "X_kv", "W_Q", "W_K", "W_V", "W_O"]
    model = panel.editor("X_kv").model()
    assert model.headerData(1, Qt.Orientation.Vertical, Qt.ItemDataRole.DisplayRole) == "b"


def test_panel_keeps_its_editors_when_only_numbers_change(qtbot, panel, session, q1):
    editor = panel.editor("Q", 1)
    type_into_cell(qtbot, q1, 0, 0, "3")
    session.tokens = ("x", "y", "z")
    assert panel.editor("Q", 1) is editor


def test_panel_rebuilds_when_heads_or_tokens_change(qtbot, panel, session, history):
    with history.transaction("Tokens"):
        new = resize.set_token_count(session.data(), 5)
        session.update(inputs=new.inputs, config=new.config, tokens=new.tokens)
    assert panel.editor("Q", 0).model().rowCount() == 5
    with history.transaction("Heads"):
        new = resize.set_heads(session.data(), 1)
        session.update(inputs=new.inputs, config=new.config)
    assert panel.tab_names() == ["Q", "K", "V", "W_O"]
    assert panel.editor("Q", 0).model().rowCount() == 5
    with pytest.raises(KeyError):
        panel.editor("Q", 1)


def test_head_tabs_follow_the_selected_head_both_ways(qtbot, panel, session):
    session.selected_head = 1
    assert panel._head_tabs["Q"].currentIndex() == 1
    assert panel._head_tabs["K"].currentIndex() == 1
    panel._head_tabs["Q"].setCurrentIndex(0)
    assert session.selected_head == 0


def test_nothing_on_screen_reads_nan(qtbot, panel):
    for editor in panel._editors.values():
        model = editor.model()
        for i in range(model.rowCount()):
            for j in range(model.columnCount()):
                assert "nan" not in model.data(model.index(i, j)).lower()


def test_a_whole_edit_round_trip_leaves_no_stray_editor(qtbot, q1):
    type_into_cell(qtbot, q1, 0, 0, "1")
    QApplication.processEvents()
    line = q1.table.findChild(QLineEdit)
    assert line is None or not line.isVisible()


def test_a_deleted_panel_no_longer_follows_the_session(qtbot, session, context):
    holder = QWidget()
    MatrixPanel(context, holder)
    holder.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    session.tokens = ("x", "y", "z")  # would raise if a deleted model were still connected
    session.inputs = session.inputs.with_array("Q", np.zeros((2, 3, 2)))
    session.selected_cell = (0, 0)


def test_qk_norm_weights_get_a_tab_that_edits_them(qtbot):
    """With QK-norm on, q_norm and k_norm are tabs like W_Q (issue 28.1: its numbers are
    editable where they are numbers); typing into q_norm changes the normed queries."""
    from attention_explorer.session.compute_session import compute_session

    data = direct_data()
    d_k = data.config.head_dim
    config = data.config.with_changes(qk_norm="rms")
    inputs = AttentionInputs(
        Q=data.inputs.Q,
        K=data.inputs.K,
        V=data.inputs.V,
        W_O=data.inputs.W_O,
        q_norm=np.ones(d_k),
        k_norm=np.ones(d_k),
    )
    session = Session.from_data(SessionData(tokens=TOKENS, config=config, inputs=inputs))
    panel = MatrixPanel(PanelContext(session, History(session), ViewPreferences()))
    qtbot.addWidget(panel)
    assert {"q_norm", "k_norm"} <= set(panel.tab_names())
    before = compute_session(session.data(), dtype="float64")["Q_normed"].copy()
    editor = panel.tabs.widget(panel.tab_names().index("q_norm"))
    assert editor.model().setData(editor.model().index(0, 0), "2")
    assert session.inputs.q_norm[0] == 2.0
    after = compute_session(session.data(), dtype="float64")["Q_normed"]
    np.testing.assert_allclose(after[..., 0], 2 * before[..., 0])
    np.testing.assert_allclose(after[..., 1:], before[..., 1:])
