"""The cache at one decoding step, painted: one small map per layer, a row per query head
(grouped under the key/value head it reads), a column per cached position.

A cell's colour is the step's attention weight of that head on that position; a position the
cache policy evicted is hatched grey, one outside the layer's own sliding window plain light
grey, and positions the learner picked (to evict them) are outlined in red. The newest
position (the token this step fed, whose K and V were just written) is marked "new". Hover a
cell for its number; a click picks the layer (and, while picking positions, toggles one).
:func:`layer_maps` reads all this off a :class:`~attention_explorer.generation.result.Generation`
(no attention is computed here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stage_colours import DEFAULT_SEQUENTIAL
from attention_explorer.generation.policy import CachePolicy
from attention_explorer.ui.widgets.colormaps import colormap_by_name
from attention_explorer.ui.widgets.plain_text import plain_tooltip

LABEL_W = 96  # the left margin: layer and head names
HEADER_H = 64  # the tokens above the columns
TITLE_H = 18  # a layer's title line
GAP = 8  # between layers
EVICTED = QColor(150, 150, 150)
OUTSIDE = QColor(222, 222, 222)
PICKED = QColor(220, 30, 30)
EDITED = QColor(255, 140, 0)


@dataclass(frozen=True)
class LayerMap:
    """One layer at one step: ``weights [heads, m]`` (the step's rows over the m positions
    fed so far), ``evicted [m]`` (hidden by the cache policy), ``outside [m]`` (beyond the
    layer's own sliding window), ``kv_heads`` and ``group`` (query heads per K/V head)."""

    layer: int
    weights: np.ndarray
    evicted: np.ndarray
    outside: np.ndarray
    kv_heads: int
    group: int
    edited: tuple = ()  # (kv head, position) of each cached vector the policy edited


def layer_maps(gen, step: int, windows=()) -> list[LayerMap]:
    """The :class:`LayerMap` of every layer at step ``step`` of ``gen``; ``windows`` the
    model's sliding window per layer (empty: none)."""
    s = gen.steps[step]
    m = s.position + 1
    policy = gen.policy if isinstance(gen.policy, CachePolicy) else CachePolicy()
    at = np.array([s.position])
    maps = []
    for layer, rows in enumerate(s.attentions):  # rows [heads, m]
        window = windows[layer] if windows else None
        model_reads = CachePolicy().visible(at, m, window)[0]  # [m]
        reads = policy.visible(at, m, window)[0]  # [m]
        cache = gen.cache[layer]
        kv = cache.keys.shape[0]
        edited = tuple(
            sorted(
                {(e.head, e.position) for e in policy.edits if e.layer == layer and e.position < m}
            )
        )
        evicted = model_reads & ~reads
        maps.append(LayerMap(layer, rows, evicted, ~model_reads, kv, cache.kv_group, edited))
    return maps


def head_label(m: LayerMap, head: int) -> str:
    """The row name of query ``head``: "head 2" (plain multi-head) or "q2 → K/V 1"."""
    if m.group == 1:
        return f"head {head}"
    return f"q{head} → K/V {head // m.group}"


class CacheFigure(QWidget):
    """The painted maps (see the module docstring); :meth:`set_maps` gives what to draw."""

    layer_clicked = Signal(int)
    position_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.maps: list[LayerMap] = []
        self.tokens: tuple[str, ...] = ()
        self.picked: frozenset = frozenset()
        self.selected_layer = 0
        self.top = 1.0
        self._lut = colormap_by_name(DEFAULT_SEQUENTIAL).getLookupTable(nPts=256, mode="byte")
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    # -- data ------------------------------------------------------------------------------
    def set_maps(self, maps: list[LayerMap], tokens, picked=frozenset(), layer: int = 0) -> None:
        """Draw ``maps`` over the cached ``tokens`` with ``picked`` positions outlined and
        ``layer`` framed."""
        self.maps, self.tokens, self.picked = list(maps), tuple(tokens), frozenset(picked)
        self.selected_layer = layer
        peaks = [float(m.weights.max()) for m in self.maps if m.weights.size]
        self.top = max(peaks) if peaks and max(peaks) > 0 else 1.0
        self.updateGeometry()
        self.setMinimumHeight(self._height())
        self.update()

    @property
    def positions(self) -> int:
        """How many cached positions the maps show."""
        return self.maps[0].weights.shape[1] if self.maps else 0

    # -- geometry --------------------------------------------------------------------------
    def cell(self) -> tuple[int, int]:
        """A cell's (width, height) in pixels for the current width."""
        m = max(1, self.positions)
        w = int(max(4, min(36, (self.width() - LABEL_W - 4) / m)))
        heads = self.maps[0].weights.shape[0] if self.maps else 1
        h = 18 if heads <= 4 else 12 if heads <= 16 else 8
        return w, h

    def _height(self) -> int:
        _, h = self.cell()
        rows = sum(mp.weights.shape[0] for mp in self.maps)
        return HEADER_H + len(self.maps) * (TITLE_H + GAP) + rows * h + 4

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """As wide as the parent offers, as tall as every layer needs."""
        return QSize(560, self._height())

    def _layer_top(self, index: int) -> int:
        _, h = self.cell()
        rows = sum(mp.weights.shape[0] for mp in self.maps[:index])
        return HEADER_H + index * (TITLE_H + GAP) + rows * h

    def hit(self, point: QPoint) -> tuple[int, int | None, int | None] | None:
        """(layer index, head or None, position or None) under ``point``, or None."""
        w, h = self.cell()
        for i, mp in enumerate(self.maps):
            top = self._layer_top(i)
            bottom = top + TITLE_H + mp.weights.shape[0] * h
            if top <= point.y() < bottom:
                col = (point.x() - LABEL_W) // w
                pos = int(col) if 0 <= col < self.positions and point.x() >= LABEL_W else None
                row = (point.y() - top - TITLE_H) // h
                head = int(row) if point.y() >= top + TITLE_H else None
                return i, head, pos
        return None

    # -- painting --------------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """The token header, then each layer's title and map."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        font = QFont(self.font())
        painter.setFont(font)
        self._paint_header(painter)
        for i, mp in enumerate(self.maps):
            self._paint_layer(painter, i, mp)
        painter.end()

    def _paint_header(self, painter: QPainter) -> None:
        w, _ = self.cell()
        metrics = QFontMetrics(painter.font())
        every = max(1, int(np.ceil(metrics.height() / max(1, w))))  # a label per readable column
        for j in range(self.positions):
            last = self.positions - 1
            if (j % every or last - j < every) and j != last:
                continue  # every ``every``-th position, and the newest
            x = LABEL_W + j * w + w // 2
            text = f"{j} {self.tokens[j]}" if j < len(self.tokens) else str(j)
            text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, HEADER_H - 16)
            painter.save()
            painter.translate(x + metrics.ascent() // 2 - 1, HEADER_H - 14)
            painter.rotate(-90)
            painter.setPen(self.palette().text().color())
            painter.drawText(0, 0, text)
            painter.restore()
        if self.positions:  # the newest position: this step's own token
            x = LABEL_W + (self.positions - 1) * w
            painter.setPen(PICKED.darker(150))
            painter.drawText(QRect(x - 20, HEADER_H - 13, w + 40, 12), Qt.AlignCenter, "new")

    def _paint_layer(self, painter: QPainter, index: int, mp: LayerMap) -> None:
        w, h = self.cell()
        top = self._layer_top(index)
        heads, m = mp.weights.shape
        text = self.palette().text().color()
        title = f"Layer {mp.layer}"
        if mp.group > 1:
            title += f" — {mp.kv_heads} K/V heads, each shared by {mp.group} query heads"
        bold = QFont(painter.font())
        bold.setBold(mp.layer == self.selected_layer)
        painter.setFont(bold)
        painter.setPen(text)
        painter.drawText(QRect(2, top, self.width() - 4, TITLE_H), Qt.AlignVCenter, title)
        painter.setFont(QFont(self.font()))
        y0 = top + TITLE_H
        painter.setPen(text)
        for head in range(heads):
            label = QRect(2, y0 + head * h, LABEL_W - 6, h)
            painter.drawText(label, Qt.AlignVCenter | Qt.AlignRight, head_label(mp, head))
        area = QRect(LABEL_W, y0, m * w, heads * h)
        painter.drawImage(area, self._cells(mp))  # one pixel a cell, scaled up
        background = self.palette().window().color()
        painter.setPen(QPen(background, 1))
        if w >= 5:  # a gap between the cells
            for j in range(1, m + 1):
                painter.drawLine(LABEL_W + j * w - 1, y0, LABEL_W + j * w - 1, y0 + heads * h - 1)
        if h >= 5:
            for head in range(1, heads + 1):
                y = y0 + head * h - 1
                painter.drawLine(LABEL_W, y, LABEL_W + m * w - 1, y)
        for j in np.flatnonzero(mp.evicted):
            column = QRect(LABEL_W + int(j) * w, y0, max(1, w - 1), heads * h - 1)
            painter.fillRect(column, QBrush(Qt.white, Qt.BDiagPattern))
        painter.setPen(QPen(Qt.white, 1))
        painter.setBrush(QBrush(EDITED))
        for g, j in mp.edited:  # a corner on each edited cached vector's rows
            for head in range(g * mp.group, (g + 1) * mp.group):
                x, y = LABEL_W + j * w, y0 + head * h
                corner = [
                    QPoint(x, y),
                    QPoint(x + max(3, w // 2), y),
                    QPoint(x, y + max(3, h // 2)),
                ]
                painter.drawPolygon(corner)
        painter.setBrush(Qt.NoBrush)
        for g in range(1, mp.kv_heads):  # a line between the K/V groups
            y = y0 + g * mp.group * h - 1
            painter.setPen(QPen(text, 1))
            painter.drawLine(LABEL_W - 4, y, LABEL_W + m * w, y)
        painter.setPen(QPen(PICKED, 2))
        for j in sorted(self.picked):
            if j < m:
                painter.drawRect(QRect(LABEL_W + j * w, y0, w - 1, heads * h - 1))
        if mp.layer == self.selected_layer:
            painter.setPen(QPen(self.palette().highlight().color(), 2))
            painter.drawRect(QRect(LABEL_W - 2, y0 - 2, m * w + 3, heads * h + 3))

    def _cells(self, mp: LayerMap) -> QImage:
        """``mp``'s cells as an image, a pixel each: the colour map of the weights, grey where
        the policy evicted a position, light grey outside the layer's window."""
        levels = np.clip(mp.weights / self.top, 0.0, 1.0)  # [heads, m]
        rgb = self._lut[np.rint(levels * 255).astype(int)][..., :3]  # [heads, m, 3]
        rgb[:, mp.evicted] = (EVICTED.red(), EVICTED.green(), EVICTED.blue())
        rgb[:, mp.outside] = (OUTSIDE.red(), OUTSIDE.green(), OUTSIDE.blue())
        rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
        heads, m = levels.shape
        image = QImage(rgb.data, m, heads, 3 * m, QImage.Format.Format_RGB888)
        return image.copy()  # owns its pixels

    # -- mouse -----------------------------------------------------------------------------
    def tooltip_at(self, point: QPoint) -> str:
        """The words for the cell under ``point`` ("" off the maps)."""
        hit = self.hit(point)
        if hit is None or hit[1] is None or hit[2] is None:
            return ""
        mp, head, j = self.maps[hit[0]], hit[1], hit[2]
        if head >= mp.weights.shape[0]:
            return ""
        token = self.tokens[j] if j < len(self.tokens) else ""
        where = f"Layer {mp.layer}, {head_label(mp, head)}, position {j} “{token}”"
        if mp.outside[j]:
            return f"{where}: outside this layer's sliding window (weight 0)"
        if mp.evicted[j]:
            return f"{where}: evicted by the cache policy (weight 0)"
        weight = format_number(float(mp.weights[head, j]), 4, display=True)
        edited = " (its cached K or V is edited)" if (head // mp.group, j) in mp.edited else ""
        return f"{where}: weight {weight}{edited}"

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Show the hovered cell's number."""
        point = event.position().toPoint()
        text = self.tooltip_at(point)
        if text:
            # token text is shown literally: a token "<b>" is not markup
            QToolTip.showText(event.globalPosition().toPoint(), plain_tooltip(text), self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Pick the layer under the click, and its position."""
        hit = self.hit(event.position().toPoint())
        if hit is None:
            return
        self.layer_clicked.emit(self.maps[hit[0]].layer)
        if hit[2] is not None:
            self.position_clicked.emit(hit[2])
