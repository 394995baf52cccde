"""Issue 31.9: no keyboard trap. Tab moves from panel to panel (out of a matrix table too,
even while a cell is being typed into); the arrows move inside a table."""

from main_window_checks import show_editor
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QTableView

#: A whole round of Tab through the window's panels takes about 50 presses on the starter.
ROUND = 120


def press_tab(qtbot, backwards: bool = False) -> None:
    """Tab (or Shift+Tab) to whatever has the keyboard now."""
    key = Qt.Key.Key_Backtab if backwards else Qt.Key.Key_Tab
    mods = Qt.KeyboardModifier.ShiftModifier if backwards else Qt.KeyboardModifier.NoModifier
    qtbot.keyClick(QApplication.focusWidget(), key, mods)


def focused_in(widget) -> bool:
    focus = QApplication.focusWidget()
    return focus is not None and (focus is widget or widget.isAncestorOf(focus))


def focus_window(qtbot, window, widget) -> None:
    window.activateWindow()
    widget.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget)


def test_tab_goes_round_every_panel_and_back_to_the_controls(qtbot, window):
    editor = show_editor(window, "X")  # 4 x 8 on the starter
    first = window.controls.tokens  # the Tokens slider
    focus_window(qtbot, window, first)
    visited = []
    for _ in range(ROUND):
        press_tab(qtbot)
        focus = QApplication.focusWidget()
        visited.append(focus)
        if focus is first:
            break
    assert visited[-1] is first, "Tab never came back to the Controls"
    tables = [w for w in visited if isinstance(w, QTableView)]
    assert tables == [editor.table]  # entered once, left after one press
    order = [
        next(name for name, part in parts(window, editor) if part is w or part.isAncestorOf(w))
        for w in visited
        if any(part is w or part.isAncestorOf(w) for _, part in parts(window, editor))
    ]
    seen = [name for i, name in enumerate(order) if i == 0 or order[i - 1] != name]
    # on screen the matrix tools sit above their table: Tab meets them first
    assert seen.index("tokens") < seen.index("matrix tools") < seen.index("table")
    assert seen.index("table") < seen.index("stages")


def parts(window, editor):
    return (
        ("tokens", window.tokens),
        ("matrix tools", editor.random_button),
        ("matrix tools", editor.seed_spin),
        ("matrix tools", editor.zeros_button),
        ("matrix tools", editor.identity_button),
        ("matrix tools", editor.scale_button),
        ("matrix tools", editor.factor_spin),
        ("table", editor.table),
        ("stages", window.stages),
    )


def test_tab_leaves_the_table_and_shift_tab_comes_back(qtbot, window):
    editor = show_editor(window, "X")
    focus_window(qtbot, window, editor.table)
    editor.table.setCurrentIndex(editor.model().index(1, 2))
    press_tab(qtbot)
    assert not focused_in(editor.table)
    press_tab(qtbot, backwards=True)
    assert QApplication.focusWidget() is editor.table
    assert (editor.table.currentIndex().row(), editor.table.currentIndex().column()) == (1, 2)


def test_arrows_move_inside_the_table(qtbot, window):
    editor = show_editor(window, "X")
    focus_window(qtbot, window, editor.table)
    editor.table.setCurrentIndex(editor.model().index(0, 0))
    qtbot.keyClick(editor.table, Qt.Key.Key_Right)
    qtbot.keyClick(editor.table, Qt.Key.Key_Down)
    index = editor.table.currentIndex()
    assert (index.row(), index.column()) == (1, 1)
    assert QApplication.focusWidget() is editor.table


def test_tab_while_typing_keeps_the_number_and_leaves_the_table(qtbot, window):
    editor = show_editor(window, "X")
    focus_window(qtbot, window, editor.table)
    editor.table.setCurrentIndex(editor.model().index(0, 0))
    qtbot.keyClick(editor.table, "7")  # the first key opens the cell's editor
    line = QApplication.focusWidget()
    assert isinstance(line, QLineEdit) and line.text() == "7"
    qtbot.keyClick(line, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: not focused_in(editor.table))
    assert window.session.inputs.X[0, 0] == 7.0
    assert editor.table.state() != QTableView.State.EditingState


def test_scale_stays_beside_its_factor_when_the_tools_wrap(qtbot, window):
    """Issue 31.13: "Scale ×" and its factor wrapped apart ("Scale ×" / "2.000")."""
    editor = show_editor(window, "X")
    for width in (180, 230, 260, 320, 600):
        editor.resize(width, 300)
        editor.layout().activate()
        qtbot.wait(1)
        for button, number in (
            (editor.scale_button, editor.factor_spin),
            (editor.random_button, editor.seed_spin),
        ):
            a = button.mapTo(editor, button.rect().center())
            b = number.mapTo(editor, number.rect().center())
            assert abs(a.y() - b.y()) <= 3 and b.x() > a.x(), (width, button.text())
