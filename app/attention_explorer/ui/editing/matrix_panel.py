"""MatrixPanel: tabs of matrix editors for every input array of the current mode.

direct mode: Q, K, V (one sub-tab per head; K and V per key/value head) and W_O if present.
projection mode: X (X_kv in cross-attention), W_Q, W_K, W_V and W_O if present.
The tabs are rebuilt only when the mode, a head count or a shape changes; otherwise each
editor's model refreshes its own numbers.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import QAbstractItemView, QTabWidget, QVBoxLayout, QWidget

from attention_explorer.session.evented_session import Session
from attention_explorer.ui.editing.matrix_editor import MatrixEditor
from attention_explorer.ui.editing.matrix_model import MatrixModel
from attention_explorer.ui.state.panel_context import PanelContext
from attention_explorer.ui.state.session_links import SessionLinks

#: Per-head arrays of direct mode.
HEAD_ARRAYS = ("Q", "K", "V")
#: What each tab is, shown as its tooltip.
ARRAY_MEANINGS = {
    "Q": "queries, one matrix per head: tokens x d_k",
    "K": "keys, one matrix per key/value head: key tokens x d_k",
    "V": "values, one matrix per key/value head: key tokens x d_v",
    "X": "token embeddings: tokens x d_model",
    "X_kv": "key/value token embeddings (cross-attention): key tokens x d_model",
    "W_Q": "query projection: d_model x heads*d_k (Q = X W_Q)",
    "W_K": "key projection: d_model x kv_heads*d_k (K = X W_K)",
    "W_V": "value projection: d_model x kv_heads*d_v (V = X W_V)",
    "W_O": "output projection: heads*d_v x d_out (output = concat W_O)",
    "sinks": "attention sinks: one learned logit per head in each softmax row (gpt-oss)",
    "q_norm": "QK-norm's weights on each head's q: d_k (or heads*d_k over all heads)",
    "k_norm": "QK-norm's weights on each head's k: d_k (or kv_heads*d_k over all heads)",
}


def panel_layout(session: Session) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The tabs the session calls for: (array name, shape) in display order.

    The session changes several fields as one consistent change, so the arrays present are
    always those of its config; optional ones (W_O) are listed only when present.
    """
    inputs, config = session.inputs, session.config
    if config.mode == "direct":
        names = [*HEAD_ARRAYS, "W_O"]
    else:
        names = ["X", "X_kv", "W_Q", "W_K", "W_V", "W_O"]
        if config.attention != "cross":
            names.remove("X_kv")
    # QK-norm's weights and the sink logits, in both modes (None when off)
    names += ["q_norm", "k_norm", "sinks"]
    arrays = [(name, getattr(inputs, name)) for name in names]
    return tuple((name, tuple(array.shape)) for name, array in arrays if array is not None)


class MatrixPanel(QWidget):
    """Every input matrix of ``context.session`` in tabs, each an editable :class:`MatrixEditor`.

    ``input_error(str)`` repeats every message an editor refuses an edit with.
    """

    input_error = Signal(str)

    def __init__(self, context: PanelContext, parent: QWidget | None = None):
        super().__init__(parent)
        self.context = context
        self.session, self.history = context.session, context.history
        self._editors: dict[tuple[str, int | None], MatrixEditor] = {}
        self._head_tabs: dict[str, QTabWidget] = {}
        self._layout_key: tuple | None = None
        self.tabs = QTabWidget(self)
        # Extra bottom padding: without it the underscore of "W_Q" falls outside the tab's
        # text rectangle with some fonts and the tab reads "W Q".
        self.tabs.setStyleSheet("QTabBar::tab { padding: 4px 12px 6px 12px; }")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self._rebuild()
        events = self.session.events
        shape_events = (events.config, events.inputs, events.tokens)
        # Before the editors' own handlers (priority 1): a change of head count replaces the
        # editors of heads that no longer exist before they could be asked to show them.
        self._links = SessionLinks(
            self,
            [
                *((e, self._on_shape_may_have_changed) for e in shape_events),
                (events.selected_head, self._on_selected_head_changed),
            ],
            priority=1,
        )

    # -- public --------------------------------------------------------------------------
    def editor(self, name: str, head: int | None = None) -> MatrixEditor:
        """The editor of array ``name`` (and ``head`` for Q/K/V in direct mode).

        Raises KeyError naming what exists when there is no such editor.
        """
        key = (name, head)
        if key not in self._editors:
            shown = ", ".join(n if h is None else f"{n}[{h}]" for n, h in self._editors)
            raise KeyError(
                f"no editor for {name}{'' if head is None else f'[{head}]'}; "
                f"the panel shows {shown or 'nothing'}"
            )
        return self._editors[key]

    def show_array(self, name: str) -> bool:
        """Bring the tab of array ``name`` to the front; False when the panel has none."""
        names = self.tab_names()
        if name not in names:
            return False
        self.tabs.setCurrentIndex(names.index(name))
        return True

    def current_array(self) -> str:
        """The name of the tab in front ("" when there is none)."""
        return self.tabs.tabText(self.tabs.currentIndex()) if self.tabs.count() else ""

    def tab_names(self) -> list[str]:
        """The names of the top-level tabs, in order."""
        return [self.tabs.tabText(i) for i in range(self.tabs.count())]

    def detach(self) -> None:
        """Stop following the session (call before the panel is thrown away)."""
        self._links.detach()
        for editor in self._editors.values():
            editor.detach()

    # -- building ------------------------------------------------------------------------
    def _on_shape_may_have_changed(self, *_args: object) -> None:
        if self._key() != self._layout_key:
            self._rebuild()

    def _key(self) -> tuple:
        config = self.session.config
        return (config.mode, config.attention, config.heads, panel_layout(self.session))

    def _rebuild(self) -> None:
        current = self.tabs.tabText(self.tabs.currentIndex()) if self.tabs.count() else ""
        with QSignalBlocker(self.tabs):
            self._clear_tabs()
            for name, shape in panel_layout(self.session):
                if self.session.config.mode == "direct" and name in HEAD_ARRAYS:
                    page = self._head_pages(name, shape[0])
                else:
                    page = self._make_editor(name, None)
                index = self.tabs.addTab(page, name)
                self.tabs.setTabToolTip(index, ARRAY_MEANINGS.get(name, name))
            names = self.tab_names()
            if current in names:
                self.tabs.setCurrentIndex(names.index(current))
        self._layout_key = self._key()
        self._on_selected_head_changed()

    def _clear_tabs(self) -> None:
        for editor in self._editors.values():
            editor.detach()
        self._editors.clear()
        self._head_tabs.clear()
        while self.tabs.count():
            page = self.tabs.widget(0)
            self.tabs.removeTab(0)
            page.deleteLater()

    def _head_pages(self, name: str, heads: int) -> QWidget:
        if heads == 1:
            return self._make_editor(name, 0)
        pages = QTabWidget(self)
        pages.setDocumentMode(True)
        pages.setTabPosition(QTabWidget.TabPosition.South)
        # "kv head" only where query heads share K and V (grouped-query attention)
        kind = "kv head" if name in ("K", "V") and self.session.config.grouped else "head"
        for head in range(heads):
            pages.addTab(self._make_editor(name, head), f"{kind} {head}")
        pages.currentChanged.connect(lambda index, n=name: self._on_head_tab_changed(n, index))
        self._head_tabs[name] = pages
        return pages

    def _make_editor(self, name: str, head: int | None) -> MatrixEditor:
        model = MatrixModel(self.context, name, head)
        editor = MatrixEditor(model, self)
        editor.model().input_error.connect(self.input_error)
        if name in ("W_Q", "W_K", "W_V"):  # scrolled to the head once laid out (a range)
            bar = editor.table.horizontalScrollBar()
            bar.rangeChanged.connect(
                lambda *_r, e=editor, n=name, b=bar: (
                    b.value() == 0 and self._scroll_editor(e, n, self.session.selected_head)
                )
            )
        self._editors[(name, head)] = editor
        return editor

    # -- following the selected head -----------------------------------------------------
    def _on_selected_head_changed(self, *_args: object) -> None:
        head = self.session.selected_head
        for name, pages in self._head_tabs.items():
            index = head if name == "Q" else self.session.config.kv_head_of(head)
            if 0 <= index < pages.count() and pages.currentIndex() != index:
                with QSignalBlocker(pages):
                    pages.setCurrentIndex(index)
        self._scroll_to_head_columns(head)

    def _scroll_to_head_columns(self, head: int) -> None:
        """Bring the selected head's columns of W_Q (its kv head's of W_K, W_V) to the left
        edge of their editors: with many heads they are far off to the right otherwise."""
        for name in ("W_Q", "W_K", "W_V"):
            editor = self._editors.get((name, None))
            if editor is not None:
                self._scroll_editor(editor, name, head)

    def _scroll_editor(self, editor: MatrixEditor, name: str, head: int) -> None:
        config = self.session.config
        width = config.value_dim if name == "W_V" else config.head_dim
        column = (head if name == "W_Q" else config.kv_head_of(head)) * width
        table = editor.table
        if not 0 <= column < table.model().columnCount():
            return
        bar, header = table.horizontalScrollBar(), table.horizontalHeader()
        per_pixel = table.horizontalScrollMode() == QAbstractItemView.ScrollMode.ScrollPerPixel
        bar.setValue(header.sectionPosition(column) if per_pixel else column)

    def _on_head_tab_changed(self, name: str, index: int) -> None:
        head = index if name == "Q" else index * self.session.config.kv_group
        if 0 <= head < self.session.config.heads and head != self.session.selected_head:
            with self.history.transaction(f"Select head {head}"):
                self.session.selected_head = head
