"""MatrixModel: a table model over one 2-D slice of a session input array.

The slice is named by an array name and, for the per-head arrays of direct mode, a head:
``("Q", 1)`` is ``session.inputs.Q[1]`` ``[n, d_k]``; ``("W_Q", None)`` is the whole
``W_Q [d_model, h*d_k]``. Every write replaces ``session.inputs`` inside one history
transaction; bad text is refused through ``input_error`` and the cell keeps its value. How rows,
columns and cells are named is :mod:`.matrix_labels`'s.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal as QtSignal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QPalette

from attention_explorer.engine.inputs import MAX_ABS_INPUT
from attention_explorer.ui.editing.matrix_changes import changed_box, value_range
from attention_explorer.ui.editing.matrix_labels import (
    KEY_ROW_ARRAYS,
    QUERY_ROW_ARRAYS,
    SliceLabels,
)
from attention_explorer.ui.state.panel_context import PanelContext
from attention_explorer.ui.state.session_links import SessionLinks
from attention_explorer.ui.widgets.colormaps import colormap_by_name
from attention_explorer.ui.widgets.number_text import (
    NumberTextError,
    format_exact,
    format_number,
    parse_number,
)
from attention_explorer.ui.widgets.plain_text import luminance, plain_tooltip

__all__ = ["HIGHLIGHT_TINT_STRENGTH", "TINT_STRENGTH", "MatrixModel"]

#: How strongly the colour map tints a cell (0 = none, 1 = the full colour).
TINT_STRENGTH = 0.42
#: Tint strength in the row of the selected query or key.
HIGHLIGHT_TINT_STRENGTH = 0.75

_Index = QModelIndex | QPersistentModelIndex


class MatrixModel(QAbstractTableModel):
    """Editable view of ``session.inputs.<name>`` (or of its slice ``[head]``), the session,
    its undo history and the colour map taken from ``context``.

    Signals: ``input_error(str)`` when text or a block is refused; ``input_accepted()``
    after a successful write.
    """

    input_error = QtSignal(str)
    input_accepted = QtSignal()

    def __init__(
        self,
        context: PanelContext,
        name: str,
        head: int | None = None,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.session, self.history, self.prefs = context.session, context.history, context.prefs
        self.name = name
        self.head = head
        self.labels = SliceLabels(self.session, name, head)
        self.last_edit_ok = True
        self._tints: np.ndarray | None = None  # [rows, cols, 3] uint8, cached per array
        self._shape = self._slice().shape
        self._shown = self.matrix()  # [rows, cols] as last told to the table
        self._range_of = self.full_array()  # the array the tints' scale was measured on
        self._tint_range = value_range(self._range_of)  # the tints' scale
        events = self.session.events
        label_events = (events.tokens, events.kv_tokens, events.config)
        self._links = SessionLinks(
            self,
            [
                (events.inputs, self._on_inputs_changed),
                *((e, self._on_labels_changed) for e in label_events),
                (events.selected_cell, self._on_selected_cell_changed),
                (self.prefs.events.colormap, self._on_colormap_changed),
            ],
        )

    def detach(self) -> None:
        """Stop following the session (call before the model is thrown away)."""
        self._links.detach()

    # -- the array -----------------------------------------------------------------------
    def full_array(self) -> np.ndarray | None:
        """The whole session array this model edits a slice of (None when unset)."""
        return getattr(self.session.inputs, self.name, None)

    def _slice(self) -> np.ndarray:
        array = self.full_array()
        if array is None:
            return np.zeros((0, 0))
        if self.head is not None:
            return array[self.head]  # [rows, cols] of one head
        return array[None, :] if array.ndim == 1 else array

    def matrix(self) -> np.ndarray:
        """A copy of the 2-D slice shown, ``[rows, columns]``."""
        return np.array(self._slice(), dtype=np.float64)

    def write_matrix(self, values: np.ndarray, label: str) -> bool:
        """Replace the whole slice with ``values`` as one undo step; False if refused."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape != self._shape:
            self._refuse(
                f"{self.slice_label()}: expected {self._shape_text()}, got "
                f"{'x'.join(map(str, values.shape))}"
            )
            return False
        return self.write_block(0, 0, values, label)

    def write_block(self, top: int, left: int, block: np.ndarray, label: str) -> bool:
        """Write ``block`` with its top-left at (top, left) as one undo step; False if refused.

        The block must fit inside the slice and hold only finite numbers within ±1e30.
        """
        block = np.atleast_2d(np.asarray(block, dtype=np.float64))
        rows, cols = self._shape
        if top < 0 or left < 0 or top + block.shape[0] > rows or left + block.shape[1] > cols:
            self._refuse(
                f"{self.slice_label()}: a {block.shape[0]}x{block.shape[1]} block does "
                f"not fit at row {top + 1}, column {left + 1} of {self._shape_text()}"
            )
            return False
        if not np.isfinite(block).all() or (np.abs(block) > MAX_ABS_INPUT).any():
            self._refuse(
                f"{self.slice_label()}: values must be finite and within "
                f"±{MAX_ABS_INPUT:g}; nothing was changed"
            )
            return False
        full = self.full_array()
        new = np.array(full, dtype=np.float64)
        target = new[self.head] if self.head is not None else new
        if target.ndim == 1:
            target = target[None, :]
        target[top : top + block.shape[0], left : left + block.shape[1]] = block
        self.last_edit_ok = True
        if np.array_equal(new, full):
            self.input_accepted.emit()
            return True
        with self.history.transaction(label):
            self.session.inputs = self.session.inputs.with_array(self.name, new)
        self.input_accepted.emit()
        return True

    def _refuse(self, message: str) -> None:
        self.last_edit_ok = False
        self.input_error.emit(message)

    def _shape_text(self) -> str:
        return f"{self._shape[0]}x{self._shape[1]}"

    # -- Qt model interface --------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Rows of the slice (0 for a child index)."""
        return 0 if parent.isValid() else self._shape[0]

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Columns of the slice (0 for a child index)."""
        return 0 if parent.isValid() else self._shape[1]

    def flags(self, index: _Index) -> Qt.ItemFlag:
        """Every cell is selectable and editable."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        """Compact text to show, exact text to edit, tint, readable text colour, tooltip."""
        if not index.isValid():
            return None
        i, j = index.row(), index.column()
        values = self._slice()
        if i >= values.shape[0] or j >= values.shape[1]:
            return None
        value = float(values[i, j])
        if role == Qt.ItemDataRole.DisplayRole:
            return format_number(value)
        if role == Qt.ItemDataRole.EditRole:
            return format_exact(value)
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(self._background(i, j))
        if role == Qt.ItemDataRole.ForegroundRole:
            dark = luminance(self._background(i, j)) < 0.5
            return QBrush(QColor("white") if dark else QColor("black"))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(
                f"{self.slice_label()}[{i}, {j}] = {format_exact(value)}\n"
                f"row: {self.labels.row_meaning(i)}\ncolumn: {self.labels.column_meaning(j)}"
            )
        return None

    def setData(self, index: _Index, value, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Parse the typed text and write it; refuse bad text with ``input_error``."""
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        i, j = index.row(), index.column()
        try:
            number = value if isinstance(value, float) else parse_number(str(value))
        except NumberTextError as error:
            self._refuse(f"{self.cell_label(i, j)}: {error}; the cell keeps its value")
            return False
        return self.write_block(i, j, np.array([[number]]), f"Edit {self.cell_label(i, j)}")

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0):
        """Token names (or dimension labels) for rows, dimension labels for columns."""
        horizontal = orientation == Qt.Orientation.Horizontal
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                self.labels.column_label(section) if horizontal else self.labels.row_label(section)
            )
        if role == Qt.ItemDataRole.ToolTipRole:
            meaning = (
                self.labels.column_meaning(section)
                if horizontal
                else self.labels.row_meaning(section)
            )
            return plain_tooltip(meaning)
        if (
            role == Qt.ItemDataRole.FontRole
            and not horizontal
            and self._is_highlighted_row(section)
        ):
            font = QFont()
            font.setBold(True)
            return font
        return None

    # -- labels (ui/editing/matrix_labels.py) ----------------------------------------------
    def slice_label(self) -> str:
        """How the slice is named in messages and undo labels: ``Q (head 1)``, ``W_Q``."""
        return self.labels.slice_label()

    def cell_label(self, i: int, j: int) -> str:
        """A cell named as the editor labels it: ``X[cat, 3]``, ``Q (head 1)[t3, 0]``."""
        return self.labels.cell_label(i, j)

    # -- colours -------------------------------------------------------------------------
    def _highlighted_row(self) -> int | None:
        cell = self.session.selected_cell
        if cell is None:
            return None
        if self.name in QUERY_ROW_ARRAYS:
            return cell[0]
        if self.name in KEY_ROW_ARRAYS:
            return cell[1]
        return None

    def _is_highlighted_row(self, i: int) -> bool:
        return self._highlighted_row() == i

    def _tint_table(self) -> np.ndarray:
        if self._tints is None:
            values = self._slice()
            if values.size == 0 or self._tint_range is None:
                self._tints = np.zeros((*values.shape, 3), dtype=np.uint8)
            else:
                low, high = self._tint_range  # same scale for every head, outliers left out
                span = high - low
                scaled = (values - low) / span if span > 0 else np.full(values.shape, 0.5)
                # a 256-entry table and one index pass: ColorMap.map interpolated each channel
                # of every cell (40 ms for a 4096 x 64 X on every edit)
                table = colormap_by_name(self.prefs.colormap).getLookupTable(
                    0.0, 1.0, nPts=256, alpha=False, mode="byte"
                )  # [256, 3]
                index = np.clip(np.rint(scaled * 255), 0, 255).astype(np.intp)  # [rows, cols]
                self._tints = table[index]  # [rows, cols, 3]
        return self._tints

    def _background(self, i: int, j: int) -> QColor:
        base = QGuiApplication.palette().color(QPalette.ColorRole.Base)
        r, g, b = (int(c) for c in self._tint_table()[i, j])
        alpha = HIGHLIGHT_TINT_STRENGTH if self._is_highlighted_row(i) else TINT_STRENGTH
        return QColor(
            round(base.red() + (r - base.red()) * alpha),
            round(base.green() + (g - base.green()) * alpha),
            round(base.blue() + (b - base.blue()) * alpha),
        )

    # -- session events ------------------------------------------------------------------
    def _refresh_all(self) -> None:
        self._tints = None
        if self._shape[0] and self._shape[1]:
            self.dataChanged.emit(
                self.index(0, 0), self.index(self._shape[0] - 1, self._shape[1] - 1)
            )

    def _on_inputs_changed(self, *_args: object) -> None:
        if not self._links:
            # Detached during this very emission (psygnal still calls the slots it had in
            # hand): the panel is replacing this editor, and its head may no longer exist.
            return
        values = self.matrix()  # [rows, cols]
        box, self._shown = changed_box(self._shown, values), values
        full = self.full_array()
        tint_range = self._tint_range
        if full is not self._range_of:  # another editor's array changed: the range did not
            self._tint_range, self._range_of = value_range(full), full
        if values.shape != self._shape:
            self.beginResetModel()
            self._shape = values.shape
            self._tints = None
            self.endResetModel()
        elif tint_range != self._tint_range:
            self._refresh_all()  # a new lowest or highest value re-tints every cell
        elif box is not None:  # only these cells show something new
            self._tints = None
            top, bottom, left, right = box
            self.dataChanged.emit(self.index(top, left), self.index(bottom, right))

    def _on_labels_changed(self, *_args: object) -> None:
        if self._shape[0]:
            self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, self._shape[0] - 1)
        if self._shape[1]:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, self._shape[1] - 1)

    def _on_selected_cell_changed(self, *_args: object) -> None:
        if self.name in QUERY_ROW_ARRAYS or self.name in KEY_ROW_ARRAYS:
            self._refresh_all()
            self._on_labels_changed()

    def _on_colormap_changed(self, *_args: object) -> None:
        self._refresh_all()
