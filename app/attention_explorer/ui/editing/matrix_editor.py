"""MatrixEditor: a spreadsheet-like editor for one 2-D slice of a session input array.

A table (type to replace a number, arrows and Enter to move, Ctrl+C/Ctrl+V for blocks, Delete
for zeros; Tab moves on to the next part of the window, as in any form) with a small toolbar of
fill helpers (random with a seed, zeros, identity, scale by a factor) and a message line under
the table for anything refused.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.ui.editing import large_paste
from attention_explorer.ui.editing.large_paste import check_paste_size
from attention_explorer.ui.editing.matrix_model import MatrixModel
from attention_explorer.ui.widgets.flow_layout import WrappingRow
from attention_explorer.ui.widgets.number_text import NumberTextError, format_block, parse_block
from attention_explorer.ui.widgets.plain_text import error_text_style

#: Width of a number column in pixels (fits "-12.3457").
COLUMN_WIDTH = 62
ROW_HEIGHT = 22


#: The keyboard's cell gets a thick frame in the theme's highlight colour (light and dark).
FOCUS_STYLE = (
    "QTableView:focus { border: 2px solid palette(highlight); }"
    "QTableView::item:focus { border: 3px solid palette(highlight); }"
)


def _together(*widgets: QWidget) -> QWidget:
    """``widgets`` side by side in one widget, so that a wrapping row never parts them."""
    holder = QWidget()
    row = QHBoxLayout(holder)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(3)
    for widget in widgets:
        row.addWidget(widget)
    return holder


class MatrixTable(QTableView):
    """The editor's table: the arrows and Enter move between cells, Tab and Shift+Tab move to
    the next or previous part of the window (no keyboard trap), also from a cell being typed
    into: the number is kept and the focus moves on."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setTabKeyNavigation(False)

    def closeEditor(self, editor: QWidget, hint: QAbstractItemDelegate.EndEditHint) -> None:  # noqa: N802
        """Tab in a cell's editor closes it (its number already written) and leaves the
        table, instead of opening the next cell's editor."""
        next_item = QAbstractItemDelegate.EndEditHint.EditNextItem
        previous = QAbstractItemDelegate.EndEditHint.EditPreviousItem
        if hint not in (next_item, previous):
            super().closeEditor(editor, hint)
            return
        super().closeEditor(editor, QAbstractItemDelegate.EndEditHint.NoHint)
        self.focusNextPrevChild(hint == next_item)


class MatrixEditor(QWidget):
    """Editor of ``session.inputs.<name>`` (or its head slice), writing through ``model``.

    The editor takes the model over (it becomes the model's parent).
    """

    #: A large paste ended: True when its numbers were written.
    paste_finished = Signal(bool)

    def __init__(self, model: MatrixModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = model.session
        self.background = large_paste.BackgroundPaste(self)
        self.background.finished.connect(self.paste_finished)
        self._model = model
        model.setParent(self)
        self._model.input_error.connect(self.show_error)
        self._model.input_accepted.connect(self.clear_message)

        self.table = self._build_table()
        self.table.installEventFilter(self)
        self.message_label = QLabel(self)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)  # messages may quote names
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addLayout(self._build_toolbar())
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message_label)
        # Tab meets the tools above the table first, as they are read (they are made after it)
        tools = (
            self.random_button,
            self.seed_spin,
            self.zeros_button,
            self.identity_button,
            self.scale_button,
            self.factor_spin,
            self.table,
        )
        for before, after in zip(tools, tools[1:]):
            QWidget.setTabOrder(before, after)

    def model(self) -> MatrixModel:
        """The table model this editor writes through."""
        return self._model

    def detach(self) -> None:
        """Stop following the session (call before the editor is thrown away); a large
        paste still being read is cancelled and its thread waited for."""
        self._model.detach()
        self.background.stop()

    # -- building ------------------------------------------------------------------------
    def _build_table(self) -> QTableView:
        table = MatrixTable(self)
        table.setStyleSheet(FOCUS_STYLE)
        table.setModel(self._model)
        table.setEditTriggers(
            QAbstractItemView.EditTrigger.AnyKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setWordWrap(False)
        horizontal = table.horizontalHeader()
        horizontal.setDefaultSectionSize(COLUMN_WIDTH)
        horizontal.setMinimumSectionSize(30)
        horizontal.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        vertical = table.verticalHeader()
        vertical.setDefaultSectionSize(ROW_HEIGHT)
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        table.itemDelegate().closeEditor.connect(self._on_editor_closed)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for text, slot in (
            ("Copy\tCtrl+C", self.copy_selection),
            ("Paste\tCtrl+V", self.paste),
            ("Set to zero\tDel", self.clear_selection),
        ):
            action = QAction(text, table)
            action.triggered.connect(slot)
            table.addAction(action)
        return table

    def _build_toolbar(self) -> WrappingRow:
        bar = WrappingRow()  # wraps onto a second line when the editor is narrow (1366x768)
        bar.setHorizontalSpacing(3)
        bar.setVerticalSpacing(2)
        self.random_button = self._tool_button(
            "Random", "Fill with rounded normal random numbers", lambda: self.fill_random()
        )
        self.seed_spin = QSpinBox(self)
        self.seed_spin.setRange(0, 999_999)
        self.seed_spin.setPrefix("seed ")
        self.seed_spin.setToolTip("Seed of the random fill: the same seed gives the same numbers")
        self.zeros_button = self._tool_button("Zeros", "Set every number to 0", self.fill_zeros)
        self.identity_button = self._tool_button(
            "Identity", "1 on the diagonal, 0 elsewhere", self.fill_identity
        )
        self.scale_button = self._tool_button(
            "Scale ×", "Multiply every number by the factor", lambda: self.scale()
        )
        self.factor_spin = QDoubleSpinBox(self)
        self.factor_spin.setRange(-1000.0, 1000.0)
        self.factor_spin.setDecimals(3)
        self.factor_spin.setValue(2.0)
        self.factor_spin.setToolTip("Factor that Scale multiplies every number by")
        # Each button stays on one line with the number it uses, however the row wraps.
        for widgets in (
            (self.random_button, self.seed_spin),
            (self.zeros_button,),
            (self.identity_button,),
            (self.scale_button, self.factor_spin),
        ):
            bar.addWidget(widgets[0] if len(widgets) == 1 else _together(*widgets))
        return bar

    def _tool_button(self, text: str, tip: str, on_click: Callable[[], object]) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(on_click)
        return button

    # -- messages ------------------------------------------------------------------------
    def show_error(self, message: str) -> None:
        """Show ``message`` under the table in the error colour."""
        self.message_label.setStyleSheet(error_text_style(self))
        self.message_label.setText(message)
        self.message_label.show()

    def show_note(self, message: str) -> None:
        """Show an informational ``message`` under the table."""
        self.message_label.setStyleSheet("")
        self.message_label.setText(message)
        self.message_label.show()

    def clear_message(self) -> None:
        """Hide the message line (after a good edit)."""
        self.message_label.clear()
        self.message_label.hide()

    def message(self) -> str:
        """The message shown under the table ('' when none)."""
        return self.message_label.text() if self.message_label.isVisibleTo(self) else ""

    # -- fill helpers --------------------------------------------------------------------
    def fill_random(self, seed: int | None = None) -> bool:
        """Fill with normal random numbers rounded to 2 decimals; same seed, same numbers."""
        if seed is None:
            seed = self.seed_spin.value()
        shape = self._model.matrix().shape
        values = np.round(np.random.default_rng(seed).normal(0.0, 1.0, size=shape), 2)
        label = f"Fill {self._model.slice_label()} with random numbers (seed {seed})"
        return self._model.write_matrix(values, label)

    def fill_zeros(self) -> bool:
        """Set every number of the slice to 0."""
        values = np.zeros(self._model.matrix().shape)
        return self._model.write_matrix(values, f"Zero {self._model.slice_label()}")

    def fill_identity(self) -> bool:
        """1 on the diagonal, 0 elsewhere (a rectangular slice gets the leading diagonal)."""
        values = np.eye(*self._model.matrix().shape)
        return self._model.write_matrix(values, f"Identity {self._model.slice_label()}")

    def scale(self, factor: float | None = None) -> bool:
        """Multiply every number by ``factor`` (the spin box's value by default)."""
        if factor is None:
            factor = self.factor_spin.value()
        with np.errstate(over="ignore", invalid="ignore"):
            values = self._model.matrix() * factor
        return self._model.write_matrix(values, f"Scale {self._model.slice_label()} by {factor:g}")

    # -- clipboard -----------------------------------------------------------------------
    def _selected_rectangle(self) -> tuple[int, int, int, int] | None:
        """(top, left, bottom, right) around the selection, else the current cell."""
        indexes = self.table.selectionModel().selectedIndexes()
        if not indexes:
            current = self.table.currentIndex()
            if not current.isValid():
                return None
            indexes = [current]
        rows = [i.row() for i in indexes]
        cols = [i.column() for i in indexes]
        return min(rows), min(cols), max(rows), max(cols)

    def copy_selection(self) -> str:
        """Copy the selected block (tab-separated, exact numbers) to the clipboard."""
        rectangle = self._selected_rectangle()
        if rectangle is None:
            return ""
        top, left, bottom, right = rectangle
        text = format_block(self._model.matrix()[top : bottom + 1, left : right + 1])
        QGuiApplication.clipboard().setText(text)
        return text

    def paste(self, text: str | None = None) -> bool:
        """Paste a block (the clipboard's text by default) with its top-left at the current cell.

        A single number pasted over a selection fills every selected cell. A block that runs
        past the edge is clipped, and the message says how much went in. Text longer than
        :data:`~attention_explorer.ui.editing.large_paste.QUICK_CHARS` is read on a worker
        thread with a progress dialog and Cancel: then True means the reading started, and
        ``paste_finished(written)`` says how it ended.
        """
        if text is None:
            text = QGuiApplication.clipboard().text()
        rows, cols = self._model.matrix().shape
        too_big = check_paste_size(text, rows, cols)  # O(1), before any parsing
        if too_big:
            self.show_error(f"Paste into {self._model.slice_label()}: {too_big}; nothing changed")
            return False
        if len(text) > large_paste.QUICK_CHARS:
            return self.background.start(text)
        try:
            block = parse_block(text)
        except NumberTextError as error:
            self.show_error(f"Paste into {self._model.slice_label()}: {error}; nothing was changed")
            return False
        return self.paste_block(block)

    def paste_block(self, block: np.ndarray) -> bool:
        """Write a parsed ``block`` at the paste anchor (clipped to the slice)."""
        top, left = self._paste_anchor()
        label = f"Paste into {self._model.slice_label()}"
        if block.shape == (1, 1) and len(self.table.selectionModel().selectedIndexes()) > 1:
            return self._set_selected_cells(float(block[0, 0]), label)
        rows, cols = self._model.matrix().shape
        fit_rows, fit_cols = min(block.shape[0], rows - top), min(block.shape[1], cols - left)
        if not self._model.write_block(top, left, block[:fit_rows, :fit_cols], label):
            return False
        if (fit_rows, fit_cols) != block.shape:
            self.show_note(
                f"Pasted {fit_rows}x{fit_cols} of the {block.shape[0]}x{block.shape[1]} block; "
                f"the rest did not fit in {self._model.slice_label()} ({rows}x{cols})"
            )
        return True

    # -- large pastes (read by large_paste.BackgroundPaste) --------------------------------
    def pasting(self) -> bool:
        """True while a large paste is being read on its worker thread."""
        return self.background.running()

    def cancel_paste(self) -> None:
        """Stop reading a large paste (the progress dialog's Cancel); nothing changes."""
        self.background.cancel()

    def _paste_anchor(self) -> tuple[int, int]:
        """The top-left of a selected rectangle, else the current cell, else (0, 0)."""
        indexes = self.table.selectionModel().selectedIndexes()
        rectangle = self._selected_rectangle()
        if rectangle is not None and len(indexes) > 1:
            top, left, bottom, right = rectangle
            if len(indexes) == (bottom - top + 1) * (right - left + 1):
                return top, left
        current = self.table.currentIndex()
        return (current.row(), current.column()) if current.isValid() else (0, 0)

    def clear_selection(self) -> bool:
        """Set the selected cells to 0."""
        return self._set_selected_cells(0.0, f"Clear cells of {self._model.slice_label()}")

    def _set_selected_cells(self, value: float, label: str) -> bool:
        indexes = self.table.selectionModel().selectedIndexes() or [self.table.currentIndex()]
        values = self._model.matrix()
        for index in indexes:
            if index.isValid():
                values[index.row(), index.column()] = value
        return self._model.write_matrix(values, label)

    # -- keyboard ------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Ctrl+C, Ctrl+V, Delete and Enter (move down) on the table."""
        if watched is self.table and event.type() in (
            QEvent.Type.KeyPress,
            QEvent.Type.ShortcutOverride,
        ):
            action = self._key_action(event)
            if action is not None:
                if event.type() == QEvent.Type.ShortcutOverride:
                    event.accept()  # keep the window's own shortcuts from taking these keys
                    return True
                action()
                return True
        return super().eventFilter(watched, event)

    def _key_action(self, event: QKeyEvent):
        if event.matches(QKeySequence.StandardKey.Copy):
            return self.copy_selection
        if event.matches(QKeySequence.StandardKey.Paste):
            return self.paste
        if self.table.state() == QAbstractItemView.State.EditingState:
            return None
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and not event.modifiers():
            return self.clear_selection
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        ):
            return self._move_down
        return None

    def _move_down(self) -> None:
        current = self.table.currentIndex()
        if current.isValid() and current.row() + 1 < self._model.rowCount():
            self.table.setCurrentIndex(self._model.index(current.row() + 1, current.column()))

    def _on_editor_closed(self, _editor: QWidget, hint: QAbstractItemDelegate.EndEditHint) -> None:
        if hint == QAbstractItemDelegate.EndEditHint.SubmitModelCache and self._model.last_edit_ok:
            self._move_down()
