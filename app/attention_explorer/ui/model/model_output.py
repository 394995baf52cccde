"""OutputPanel: what the model does with the text, before and after the learner's edit.

* Decoders (GPT-2): the top 10 next tokens at a chosen position (the last by default) after
  the edit, with their probability before and the change; and the probability of each actual
  next token along the text, as a strip (before above, after below).
* Masked-LM checkpoints (BERT with its prediction head): the predictions at [MASK] (the first
  [MASK] by default; any position can be chosen).
* Sentence-embedding models (MiniLM, no output head): the panel says what a prediction would
  need, and shows the cosine similarity of the mean-pooled embedding to a second sentence the
  learner types, before and after.
* Models with routed experts (Qwen3-MoE, OLMoE, gpt-oss, DeepSeek-V3): the router's choice
  at the chosen position in a chosen layer: which experts and their weights, after the edit
  and, where it differs, before.
* Every model: how far each layer's hidden state moved, per token (‖h_edited − h_original‖
  over ‖h_original‖), as a layers x tokens map.

The panel never runs the model: it reads two ModelRuns (``show_runs``) and the second
sentence's embedding (``show_second``), which the ModelRunner computes off the UI thread.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetricsF, QPalette
from PySide6.QtWidgets import (
    QHeaderView,
    QLineEdit,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.display.ticks import axis_ticks, short_label, tick_stride
from attention_explorer.ui.heatmap.heatmap_labels import ALL_LABELS_UP_TO, fitting_font
from attention_explorer.ui.model.router_words import router_summary
from attention_explorer.ui.widgets import layout_parts as parts
from attention_explorer.ui.widgets.colormaps import colormap_by_name

DEFAULT_SECOND = "A cat was sleeping on the rug."
TOP_K = 10
MASK_TOKENS = ("[MASK]", "<mask>")


def percent(p: float) -> str:
    """A probability as a percentage with one decimal ("12.3%")."""
    return f"{100.0 * p:.1f}%"


def change_text(change: float) -> str:
    """A change of probability in percentage points ("+1.2 pp", "−0.4 pp", "0.0 pp")."""
    points = round(100.0 * change, 1)
    if points == 0:
        return "0.0 pp"
    return f"{'+' if points > 0 else '−'}{abs(points):.1f} pp"


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine similarity of two vectors ``[d]`` (0 when either is zero)."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm > 0 else 0.0


def hidden_movement(original, edited) -> np.ndarray:
    """``[layers + 1, n]``: ‖h_edited − h_original‖ / ‖h_original‖ per layer and token."""
    before = np.asarray(original.hidden, dtype=np.float64)  # [L+1, n, d]
    after = np.asarray(edited.hidden, dtype=np.float64)
    size = np.linalg.norm(before, axis=-1)  # [L+1, n]
    moved = np.linalg.norm(after - before, axis=-1)  # [L+1, n]
    return np.divide(moved, size, out=np.zeros_like(moved), where=size > 0)


class _Map(QWidget):
    """A small labelled heatmap (the probability strip, the hidden-state movement)."""

    def __init__(self, colormap: str, height: int):
        super().__init__()
        self.values: np.ndarray | None = None
        self._layout: tuple | None = None  # (rows, cols, r, c, room) of the axes drawn
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setFixedHeight(height)
        self.base_height, self.levels = height, 1
        self.graphics.setBackground(self.palette().color(QPalette.ColorRole.Base))
        self.plot = self.graphics.addPlot()
        self.plot.invertY(True)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(colormap_by_name(colormap))
        self.plot.addItem(self.image)
        self.bar = pg.ColorBarItem(interactive=False, colorMapMenu=False, width=10)
        self.bar.setColorMap(colormap_by_name(colormap))
        self.bar.setImageItem(self.image, insert_in=self.plot)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)

    def draw(self, values: np.ndarray, rows, cols, levels) -> None:
        """Draw ``values [r, c]`` with row names ``rows`` and column names ``cols``. The axes
        are laid out again only when the names, the shape or the room change (an edit of the
        same text changes the values only: new ticks cost more than the image itself)."""
        self.values = np.asarray(values, dtype=np.float64)
        r, c = self.values.shape
        self.image.setImage(self.values.astype(np.float32), autoLevels=False, levels=levels)
        self.bar.setLevels(levels)
        room = max(120.0, float(self.plot.getViewBox().width() or self.width() - 80))
        layout = (tuple(rows), tuple(cols), r, c, room)
        if layout == self._layout:
            return
        self._layout = layout
        self.image.setRect(pg.QtCore.QRectF(0, 0, c, r))
        # Row names in full ("embeddings" was cut to "embeddin…"); the axis widens for them.
        self.plot.getAxis("left").setTicks([[(i + 0.5, s) for i, s in enumerate(rows)], []])
        self._label_columns(tuple(cols), room)
        self.plot.setRange(xRange=(0, c), yRange=(0, r), padding=0)

    def _label_columns(self, cols: tuple[str, ...], room: float) -> None:
        """Name every column up to 32 (staggered over up to 6 lines, names cut only when
        even that does not fit, at 7 pt at least); beyond, or when nothing fits, every k-th.
        The map grows by the extra lines of names."""
        axis = self.plot.getAxis("bottom")
        fit = None
        if 0 < len(cols) <= ALL_LABELS_UP_TO:
            fit = fitting_font(cols, room / len(cols), True, axis.font())
        if fit is None:
            stride = tick_stride(len(cols), room, 7.0 * max(3, max(map(len, cols), default=3)))
            axis.setStyle(tickFont=None)
            axis.setTicks([axis_ticks(cols, stride), []])
            self.levels = 1
        else:
            font, chars, levels = fit
            axis.setStyle(tickFont=font)
            ticks = [
                (i + 0.5, "\n" * (i % levels) + short_label(t, chars)) for i, t in enumerate(cols)
            ]
            axis.setTicks([ticks, []])
            self.levels = levels
            line = QFontMetricsF(font).lineSpacing()
            axis.setHeight(int(line * levels + 8))
        self.graphics.setFixedHeight(self.base_height + int(14 * (self.levels - 1)))

    def names(self, side: str = "bottom") -> list[str]:
        """The names shown on axis ``side`` (for tests and checks), without stagger lines."""
        levels = getattr(self.plot.getAxis(side), "_tickLevels", None) or [[]]
        return [text.lstrip("\n") for _, text in levels[0]]

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """A new width may name more (or fewer) columns: lay the axes out again."""
        super().resizeEvent(event)
        if self.values is not None and self._layout is not None:
            rows, cols, *_ = self._layout
            self._layout = None
            low, high = self.image.getLevels()
            levels = (float(low), float(high))
            self.draw(self.values, rows, cols, levels)


class OutputPanel(QWidget):
    """The model's output before and after the edit. ``second_changed(text)`` asks for the
    embedding of the learner's second sentence."""

    second_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.original = self.edited = None
        self.second_embedding: np.ndarray | None = None
        self.kind = parts.plain_label("Open a layer of a model: its output shows here.")
        self.position = QSpinBox()
        self.position.setEnabled(False)
        self.position_label = parts.plain_label()
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["token", "after", "before", "change"])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)  # long names
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setFixedHeight(22 * TOP_K + 30)  # all ten rows: the dock scrolls instead
        self.strip_label = parts.plain_label(
            "Probability of each actual next token (before, after)"
        )
        self.strip = _Map("viridis", 110)
        self.second = QLineEdit(DEFAULT_SECOND)
        self.router_layer = QSpinBox()  # the layer whose router choice is shown
        self.router_text = parts.plain_label()
        self._routed: list[int] = []  # the runs' routed layers (empty: a dense model)
        self.similarity = parts.plain_label()
        self.moved_label = parts.plain_label("How far each layer's hidden state moved, per token")
        self.moved = _Map("magma", 170)
        self._form = parts.form(
            ("Position", parts.row(self.position, (self.position_label, 1))),
            ("Compare with", self.second),
            ("Experts of layer", self.router_layer),
        )
        parts.column(
            self,
            self.kind,
            self._form,
            self.router_text,
            self.table,
            self.similarity,
            self.strip_label,
            self.strip,
            self.moved_label,
            self.moved,
            parts.STRETCH,  # an embedding model has no table: the rest stays at the top
        )
        self.position.valueChanged.connect(lambda *_: self._show_predictions())
        self.position.valueChanged.connect(lambda *_: self._show_router())
        self.router_layer.valueChanged.connect(lambda *_: self._show_router())
        self.second.editingFinished.connect(lambda: self.second_changed.emit(self.second.text()))
        self._set_sections(predictions=False, embedding=False)
        self.moved.hide()
        self.moved_label.hide()
        self._form.setRowVisible(2, False)  # shown for a model with routed experts
        self.router_text.hide()

    # -- content ----------------------------------------------------------------------------
    def mode(self) -> str:
        """ "decoder", "mlm" or "embedding" for the runs shown ("" before any)."""
        run = self.edited
        if run is None:
            return ""
        if run.logits is None:
            return "embedding"
        return "decoder" if run.model.weights.causal else "mlm"

    def show_runs(self, original, edited) -> None:
        """Show the output of ``original`` (the model's own run) and ``edited``."""
        new_text = self.edited is None or self.edited.tokens != edited.tokens
        self.original, self.edited = original, edited
        mode = self.mode()
        self._set_sections(predictions=mode != "embedding", embedding=mode == "embedding")
        n = len(edited.tokens)
        if new_text:
            self.position.setRange(0, n - 1)
            self.position.setValue(self._default_position())
        self.position.setEnabled(mode != "embedding")
        self.kind.setText(self._kind_text(mode))
        self._show_predictions()
        self._set_router(new_text)
        self._show_strip()
        self._show_similarity()
        moved = hidden_movement(original, edited)  # [L+1, n]
        rows = ["embeddings", *(f"layer {k}" for k in range(moved.shape[0] - 1))]
        self.moved.draw(moved, rows, edited.tokens, (0.0, max(1e-6, float(moved.max()))))
        self.moved.setVisible(True)
        self.moved_label.setVisible(True)
        most = float(moved.max())
        self.moved_label.setText(
            "How far each layer's hidden state moved, per token (‖h_edited − h‖ / ‖h‖): "
            + (f"at most {most:.3g}" if most > 0 else "nothing moved yet; edit a number")
        )
        if mode == "embedding" and self.second_embedding is None:
            self.second_changed.emit(self.second.text())

    def summary(self) -> str:
        """One line: the top prediction before and after, or the similarity before and after
        ("" when there is nothing to say yet)."""
        mode = self.mode()
        if mode in ("decoder", "mlm"):
            position = self.position.value()
            was, _i, p_was = self.original.top_tokens(position, 1)[0]
            now, _j, p_now = self.edited.top_tokens(position, 1)[0]
            where = "next token" if mode == "decoder" else f"prediction at {position}"
            return f"Top {where}: “{was}” {percent(p_was)} → “{now}” {percent(p_now)}."
        if mode == "embedding" and self.second_embedding is not None:
            was = cosine(self.original.embedding(), self.second_embedding)
            now = cosine(self.edited.embedding(), self.second_embedding)
            return f"Similarity to the second sentence: {was:.4f} → {now:.4f}."
        return ""

    def show_second(self, text: str, embedding) -> None:
        """The embedding ``[d]`` of the second sentence ``text`` is ready."""
        if text == self.second.text():
            self.second_embedding = np.asarray(embedding, dtype=np.float64)
            self._show_similarity()

    def _default_position(self) -> int:
        tokens = self.edited.tokens
        if self.mode() == "mlm":
            masks = [i for i, t in enumerate(tokens) if t in MASK_TOKENS]
            if masks:
                return masks[0]
        return len(tokens) - 1

    def _kind_text(self, mode: str) -> str:
        run = self.edited
        if mode == "decoder":
            if run is self.original:  # nothing edited or knocked out yet
                return (
                    f"{run.model.name} predicts the next token: its top {TOP_K}. Edit a number "
                    "or knock out a head to see them move."
                )
            return f"{run.model.name} predicts the next token: top {TOP_K} after the edit."
        if mode == "mlm":
            masks = sum(t in MASK_TOKENS for t in run.tokens)
            hint = "" if masks else " Put [MASK] in the text to ask it to fill a gap."
            return f"{run.model.name} fills in the token at a position (masked LM).{hint}"
        return (
            f"{run.output_note}. As a sentence-embedding model its output is the mean of its "
            "last hidden states: compare it with a second sentence."
        )

    def _set_sections(self, predictions: bool, embedding: bool) -> None:
        for widget in (self.table, self.position, self.position_label):
            widget.setVisible(predictions)
        self._form.setRowVisible(0, predictions)
        self._form.setRowVisible(1, embedding)
        self.similarity.setVisible(embedding)
        show_strip = predictions and self.mode() == "decoder"
        self.strip.setVisible(show_strip)
        self.strip_label.setVisible(show_strip)

    def _show_predictions(self) -> None:
        if self.edited is None or self.mode() == "embedding":
            return
        position = self.position.value()
        token = self.edited.tokens[position]
        verb = "after" if self.mode() == "decoder" else "at"
        self.position_label.setText(f"the token {verb} “{token}” (position {position})")
        after = self.edited.top_tokens(position, TOP_K)
        before = np.exp(self.original.log_probs(position))  # [vocab]
        rows = [(name, index, p, name) for name, index, p in after]
        top_name, top_index, _ = self.original.top_tokens(position, 1)[0]
        if top_index not in {index for _, index, _ in after}:  # the old favourite fell out
            now = float(np.exp(self.edited.log_probs(position)[top_index]))
            rows.append((top_name, top_index, now, f"{top_name} (top before)"))
        self.table.setFixedHeight(22 * len(rows) + 30)  # every row shown, no inner scroll bar
        self.table.setRowCount(len(rows))
        for row, (_, index, p, label) in enumerate(rows):
            was = float(before[index])
            cells = (label, percent(p), percent(was), change_text(p - was))
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, col, item)

    def _set_router(self, new_text: bool) -> None:
        """Show the router section when the model has routed experts; on a new text start at
        its first routed layer."""
        routed = self.edited.routed_layers()
        fresh = routed != self._routed
        self._routed = routed
        self._form.setRowVisible(2, bool(routed))
        self.router_text.setVisible(bool(routed))
        if not routed:
            return
        if fresh or new_text:
            self.router_layer.blockSignals(True)
            self.router_layer.setRange(0, self.edited.n_layers - 1)
            self.router_layer.setValue(routed[0])
            self.router_layer.blockSignals(False)
        self._show_router()

    def router_summary(self) -> str:
        """The router's choice at the chosen position and layer, as the panel shows it ("" for
        a model without routed experts)."""
        if self.edited is None or not self._routed:
            return ""
        layer, position = self.router_layer.value(), self.position.value()
        return router_summary(self.original, self.edited, layer, position)

    def _show_router(self) -> None:
        if self.edited is not None and self._routed:
            self.router_text.setText(self.router_summary())

    def _show_strip(self) -> None:
        if self.mode() != "decoder" or len(self.edited.tokens) < 2:
            return
        before = np.exp(self.original.next_token_log_probs())  # [n - 1]
        after = np.exp(self.edited.next_token_log_probs())  # [n - 1]
        self.strip.draw(
            np.stack([before, after]), ["before", "after"], self.edited.tokens[1:], (0.0, 1.0)
        )

    def _show_similarity(self) -> None:
        if self.mode() != "embedding":
            return
        if self.second_embedding is None:
            self.similarity.setText("Type a second sentence: its similarity shows here.")
            return
        was = cosine(self.original.embedding(), self.second_embedding)
        now = cosine(self.edited.embedding(), self.second_embedding)
        self.similarity.setText(
            f"Cosine similarity to “{self.second.text()}”: before {was:.4f}, after {now:.4f} "
            f"(change {now - was:+.4f})"
        )
