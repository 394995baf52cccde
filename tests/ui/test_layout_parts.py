"""The layout pieces the model panel, the output dock, the compare view and the sweep dialog are
built from: literal labels, buttons, a hidden progress bar, rows, columns and forms that keep
the order and the stretch they are given."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QWidget

from attention_explorer.ui.widgets import layout_parts as parts


def test_a_plain_label_shows_markup_literally_and_wraps(qtbot):
    label = parts.plain_label("<img src=x>")
    qtbot.addWidget(label)
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert label.wordWrap() and label.text() == "<img src=x>"


def test_a_button_starts_as_asked_and_a_progress_bar_starts_hidden(qtbot):
    push = parts.button("Cancel", enabled=False, tip="stop the run")
    bar = parts.progress_bar()
    qtbot.addWidget(push)
    qtbot.addWidget(bar)
    assert (push.text(), push.isEnabled(), push.toolTip()) == ("Cancel", False, "stop the run")
    assert parts.button("Start").isEnabled() and not bar.isVisibleTo(None)


def test_a_row_keeps_the_order_the_stretch_and_the_empty_space(qtbot):
    holder = QWidget()
    qtbot.addWidget(holder)
    first, second, last = QLabel("a", holder), QLineEdit(holder), QLabel("c", holder)
    inner = parts.row(QLabel("x", holder))
    row = parts.row(first, (second, 2), parts.STRETCH, last, inner)
    assert row.count() == 5
    assert [row.itemAt(i).widget() for i in (0, 1, 3)] == [first, second, last]
    assert row.itemAt(2).spacerItem() is not None and row.stretch(2) == 1
    assert row.itemAt(4).layout() is inner
    assert [row.stretch(i) for i in (0, 1, 3, 4)] == [0, 2, 0, 0]


def test_a_column_is_the_layout_of_its_parent_and_a_form_keeps_its_rows(qtbot):
    holder = QWidget()
    qtbot.addWidget(holder)
    field = QLineEdit()
    form = parts.form(("Text", field), ("More", parts.row(QLabel("y"))))
    column = parts.column(holder, form, (QLabel("z"), 1))
    assert holder.layout() is column and column.itemAt(0).layout() is form
    assert column.stretch(1) == 1
    assert form.rowCount() == 2
    label = form.itemAt(0, QFormLayout.ItemRole.LabelRole).widget()
    assert label.text() == "Text"
    assert form.itemAt(0, QFormLayout.ItemRole.FieldRole).widget() is field
