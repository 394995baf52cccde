"""Issue 31.16: a large paste is read off the GUI thread, with progress and Cancel, within the
session's own sizes (a 1000 x 1000 block, 6.9 M characters, is no longer refused by a fixed
1 M limit when the matrix it goes into is that large)."""

import numpy as np
import pytest

from attention_explorer.session import History, Session, resize, starter_session
from attention_explorer.ui.editing import large_paste
from attention_explorer.ui.editing.matrix_panel import MatrixPanel
from attention_explorer.ui.state.panel_context import PanelContext
from attention_explorer.ui.state.preferences import ViewPreferences
from attention_explorer.ui.widgets.number_text import NumberTextError, format_block

ROWS, COLS = 300, 64  # X of the session: 300 tokens x d_model 64


@pytest.fixture
def editor(qtbot, monkeypatch):
    monkeypatch.setattr(large_paste, "QUICK_CHARS", 1000)  # every block here is "large"
    monkeypatch.setattr(large_paste, "CHUNK_ROWS", 20)
    data = resize.set_d_model(resize.set_token_count(starter_session(), ROWS), COLS)
    session = Session.from_data(data)
    panel = MatrixPanel(PanelContext(session, History(session), ViewPreferences()))
    qtbot.addWidget(panel)
    panel.resize(560, 320)
    panel.show()
    qtbot.waitExposed(panel)
    panel.tabs.setCurrentIndex(panel.tab_names().index("X"))
    editor = panel.editor("X")
    editor.table.setCurrentIndex(editor.model().index(0, 0))
    yield editor, session
    editor.detach()


def block_text(rows=ROWS, cols=COLS, seed=3) -> tuple[np.ndarray, str]:
    block = np.round(np.random.default_rng(seed).normal(size=(rows, cols)), 4)
    return block, format_block(block)


def test_a_large_paste_is_read_in_the_background_with_progress(qtbot, editor):
    editor, session = editor
    block, text = block_text()
    shown: list[int] = []
    assert editor.paste(text) is True  # started, not yet written
    assert editor.pasting()
    editor.background.job.progress.connect(shown.append)
    with qtbot.waitSignal(editor.paste_finished, timeout=30000) as finished:
        pass
    assert finished.args == [True]
    np.testing.assert_array_equal(session.inputs.X, block)
    assert shown and shown[-1] == 100
    assert editor.background.dialog is None
    qtbot.waitUntil(lambda: not editor.pasting(), timeout=5000)  # the thread has ended


def test_cancel_changes_nothing(qtbot, editor):
    editor, session = editor
    before = session.inputs.X.copy()
    _, text = block_text()
    assert editor.paste(text) is True
    with qtbot.waitSignal(editor.paste_finished, timeout=5000) as finished:
        editor.cancel_paste()  # as the progress dialog's Cancel does
    assert finished.args == [False]
    qtbot.waitUntil(lambda: not editor.pasting(), timeout=30000)
    qtbot.wait(20)
    np.testing.assert_array_equal(session.inputs.X, before)
    assert "cancelled; nothing changed" in editor.message()


def test_a_bad_number_far_down_is_named_by_its_row(qtbot, editor):
    editor, session = editor
    before = session.inputs.X.copy()
    block, text = block_text()
    lines = text.split("\n")
    lines[137] = lines[137].replace(lines[137].split("\t")[5], "abc", 1)
    with qtbot.waitSignal(editor.paste_finished, timeout=30000) as finished:
        editor.paste("\n".join(lines))
    assert finished.args == [False]
    assert "row 138, column 6" in editor.message()
    np.testing.assert_array_equal(session.inputs.X, before)


def test_the_limit_follows_the_matrix():
    assert large_paste.paste_limit(4, 8) == 1_000_000  # small matrices keep the old limit
    assert large_paste.paste_limit(1000, 1000) >= 6_900_000  # a 1000 x 1000 block fits
    assert large_paste.check_paste_size("1" * 7_000_000, 1000, 1000) is None
    refused = large_paste.check_paste_size("1" * 2_000_000, 4, 8)
    assert "2,000,000 characters" in refused and "4x8 matrix" in refused


def test_chunks_parse_like_one_block(monkeypatch):
    monkeypatch.setattr(large_paste, "CHUNK_ROWS", 7)
    block, text = block_text(50, 5)
    np.testing.assert_array_equal(large_paste.parse_in_chunks(text), block)
    ragged = text + "\n1\t2"
    with pytest.raises(NumberTextError, match="row 51 has 2 numbers but row 50 has 5"):
        large_paste.parse_in_chunks(ragged)
    assert large_paste.parse_in_chunks(text, cancelled=lambda: True) is None
    np.testing.assert_array_equal(large_paste.parse_in_chunks("[[1, 2], [3, 4]]"), [[1, 2], [3, 4]])
