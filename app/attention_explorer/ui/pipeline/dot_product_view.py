"""DotProductView: one score as a dot product, q and k side by side, editable.

Rows (painted by :class:`~.dot_product_canvas.PairCanvas`): the query's q vector, the key's k
vector (a cell per component, coloured by sign), and their element-wise products, each written
in its cell over a bar from the cell's middle (right for a positive product, left for a
negative one, as long as the product is large against the largest); under them the sum (the
score) and what it becomes: the scaled score, the weight and the query's output. Every number
is read from the trace (the products from the engine's
:func:`~attention_explorer.engine.explain`): the view computes nothing. Dragging a q or k cell
up or down, or typing into the boxes below, edits Q or K through the session (one undo step
per drag), so the score, the weight and the output move.
Q and K can be edited here when they are typed (direct mode); in projection mode they are
X·W_Q and X·W_K: the view says so in place of the boxes, with a button that asks to switch to
typing Q, K and V directly (``direct_requested``).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.engine import explain
from attention_explorer.engine.variants.explain_steps import scored_stage
from attention_explorer.ui.pipeline.dot_product_canvas import PairCanvas, shown_number


class DotProductView(QWidget):
    """The score of (query ``row``, key ``col``) in ``head`` as q · k, editable (module doc).

    ``direct_requested(array)`` asks the window to switch to typing Q, K and V ("Q" here,
    "V" in the weighted sum)."""

    direct_requested = Signal(str)
    #: The typed array the "type directly" button is about.
    TYPED = "Q"

    def __init__(self, session, history, live_trace, parent=None):
        super().__init__(parent)
        self.setObjectName("dotProductView")
        self.session, self.history, self.live = session, history, live_trace
        self.pair: tuple[int, int, int] | None = None  # head, row, col
        self._drags = 0
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)  # token names stay plain text
        self.title.setWordWrap(True)
        self.canvas = PairCanvas(self)
        self.result = QLabel()
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        self.result.setWordWrap(True)
        # Two lines always: a wrapped sum must push the canvas up, never be drawn over it.
        self.result.setMinimumHeight(2 * self.result.fontMetrics().lineSpacing() + 2)
        self.component = QSpinBox()
        self.component.setPrefix("component ")
        self.q_box, self.k_box = QDoubleSpinBox(), QDoubleSpinBox()
        for name, box in (("q", self.q_box), ("k", self.k_box)):
            box.setRange(-1e6, 1e6)
            box.setDecimals(4)
            box.setPrefix(f"{name} = ")
            box.setKeyboardTracking(False)  # typed: applied on Enter or leaving the box
        # In projection mode, where q and k are computed: where they come from, and a way out.
        self.source = QLabel()
        self.source.setObjectName("pairSource")
        self.source.setTextFormat(Qt.TextFormat.PlainText)
        self.source.setWordWrap(False)  # one line: the view is a few lines tall
        self.direct_button = QPushButton("Type Q, K, V…")
        self.direct_button.setToolTip(
            "Switch to typing Q, K and V directly (every number is kept; Undo switches back)"
        )
        self.direct_button.clicked.connect(lambda: self.direct_requested.emit(self.TYPED))
        row = QHBoxLayout()
        row.addWidget(self.component)
        row.addWidget(self.q_box)
        row.addWidget(self.k_box)
        row.addWidget(self.source, 1)
        row.addWidget(self.direct_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 0, 2, 0)
        layout.setSpacing(2)
        # It takes the narration's height, never more: showing it must not resize the dock
        # (the stage views above would move under the learner's eyes).
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        layout.addWidget(self.title)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.result)
        layout.addLayout(row)
        self.component.valueChanged.connect(self._on_component)
        self.canvas.picked.connect(self.component.setValue)
        self.canvas.dragged.connect(self._on_dragged)
        self.canvas.released.connect(self._end_drag)
        self.q_box.valueChanged.connect(lambda v: self.set_component(0, self.component.value(), v))
        self.k_box.valueChanged.connect(lambda v: self.set_component(1, self.component.value(), v))
        live_trace.updated.connect(self._on_trace)

    # -- public ------------------------------------------------------------------------------
    def show_pair(self, head: int, row: int, col: int) -> None:
        """Follow the score of query ``row`` and key ``col`` in ``head``."""
        self.pair = (head, row, col)
        self._on_trace(self.live.trace)

    def editable(self) -> bool:
        """True when Q and K are typed (direct mode), so q and k can be edited here; not under
        RoPE, where the view shows the rotated q and k, which are not typed."""
        return self.session.config.mode == "direct" and self.session.config.positional != "rope"

    def numbers(self) -> dict[str, float]:
        """What the view shows now: score, scaled, weight (read from the trace)."""
        trace = self.live.trace
        head, i, j = self.pair
        return {
            "score": float(trace.stage("scores", head)[i, j]),
            "scaled": float(trace.stage("scaled", head)[i, j]),
            "weight": float(trace.stage("weights", head)[i, j]),
        }

    def set_component(self, which: int, component: int, value: float, merge: str | None = None):
        """Edit row ``which`` (0: q, 1: k) at ``component`` through the session, one undo
        step (drags pass a ``merge`` key so that one drag is one step). False when that row
        cannot be edited here."""
        trace = self.live.trace
        target = self._edit_target(trace, which, component) if trace is not None else None
        if target is None or self.pair is None:
            return False
        name, index, token = target
        array = np.array(getattr(self.session.inputs, name), dtype=np.float64)  # [h, n, d]
        if not np.isfinite(value) or array[index] == value:
            return False
        array[index] = value
        with self.history.transaction(f"Edit {name} of “{token}”", merge=merge):
            self.session.inputs = self.session.inputs.with_array(name, array)
        return True

    def editable_rows(self) -> tuple[int, ...]:
        """The rows (0: q, 1: k) that can be edited here: both when Q and K are typed."""
        return (0, 1) if self.editable() else ()

    def _edit_target(self, trace, which: int, component: int):
        """(array name, index into it, token) edited by row ``which`` at ``component``."""
        if which not in self.editable_rows():
            return None
        head, i, j = self.pair
        name = "Q" if which == 0 else "K"
        index = (self._slot(trace, head, which), i if which == 0 else j, component)
        return name, index, trace.tokens[i] if which == 0 else trace.kv_tokens[j]

    # -- internals ---------------------------------------------------------------------------
    @staticmethod
    def _slot(trace, head: int, which: int) -> int:
        """The index of ``head``'s Q (or its shared K/V head's K) in the typed arrays."""
        config = trace.config
        if which == 0:
            return head
        return head // max(1, config.heads // config.n_kv_heads)

    def _on_dragged(self, which: int, component: int, value: float) -> None:
        self.set_component(which, component, value, merge=f"dot-drag-{self._drags}")

    def _end_drag(self) -> None:
        self._drags += 1

    def _on_component(self, component: int) -> None:
        self.canvas.current = component
        self.canvas.update()
        self._fill_boxes()

    def _fill_boxes(self) -> None:
        c, canvas = self.component.value(), self.canvas
        rows = self.editable_rows()
        for row, (box, values) in enumerate(((self.q_box, canvas.q), (self.k_box, canvas.k))):
            box.blockSignals(True)
            box.setPrefix(f"{canvas.names[row]} = ")
            box.setValue(float(values[c]) if c < values.size else 0.0)
            box.setEnabled(row in rows)
            box.blockSignals(False)
            box.setToolTip(self._box_tip(row, row in rows))
            box.setVisible(bool(rows))  # greyed boxes say nothing: the source line does
        canvas.editable_rows = rows
        self.source.setText(self.source_text() if not rows else "")
        self.source.setToolTip(self.source_tip() if not rows else "")
        self.source.setVisible(not rows)
        self.direct_button.setVisible(not rows and self.session.config.mode == "projection")

    def source_text(self) -> str:
        """Where q and k come from when they cannot be typed here (one short line)."""
        config = self.session.config
        rope = config.positional == "rope"
        if config.mode == "projection":
            return "q = x·W_Q, k = x·W_K" + (", then RoPE" if rope else "")
        return "q, k: Q and K turned by RoPE"

    def source_tip(self) -> str:
        """The source line's whole sentence (its tooltip)."""
        if self.session.config.mode == "projection":
            return (
                "Here q and k are computed: q = x·W_Q and k = x·W_K from the embeddings X. "
                "Edit X, W_Q or W_K, or switch to typing Q, K and V directly."
            )
        return "Under RoPE the scores read q and k turned by their positions: edit Q or K."

    def _box_tip(self, _row: int, editable: bool) -> str:
        if editable:
            return "Type a new value (Enter): the score, the weight and the output follow"
        return (
            "Q and K are X·W_Q and X·W_K here: edit X or W_Q / W_K, or double-click "
            "the Q view to type Q, K and V directly"
        )

    def _on_trace(self, trace) -> None:
        if trace is None or self.pair is None or not self.isVisibleTo(self.window()):
            return
        head, i, j = self.pair
        if head not in trace.heads or i >= trace.n_queries or j >= trace.n_keys:
            return
        # the q and k the scores read: rotated under RoPE, normed under QK-norm
        q = trace.stage(scored_stage(trace, "Q"), head)[i]  # [d_k]
        k = trace.stage(scored_stage(trace, "K"), head)[j]  # [d_k]
        worked = explain(trace, "scores", head, i, j, q.size).steps[0]  # the engine's products
        products = [value for _label, value in worked.terms]  # [d_k]
        self.canvas.set_numbers(q, k, products)
        self.component.setRange(0, max(0, q.size - 1))
        self._fill_boxes()
        n = self.numbers()
        output = trace.stage("head_outputs", head)[i]  # [d_v]
        self.title.setText(f"q of “{trace.tokens[i]}” · k of “{trace.kv_tokens[j]}”, head {head}")
        self.result.setText(
            f"sum = score {shown_number(n['score'])} → scaled {shown_number(n['scaled'])} → weight "
            f"{shown_number(n['weight'])} → output[0] {shown_number(output[0])}"
        )
