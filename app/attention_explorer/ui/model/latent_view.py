"""LatentStagesDialog: the stages of an open multi-head latent attention layer (DeepSeek-V3)
as labelled maps, numbers in the cells where they fit.

The explorer opens a latent layer in direct mode (Q, K and V per head, as the model makes
them); this non-modal window shows what comes before them: each token's latent ``c_kv`` and
the one rotary key ``k_pe`` (all the cache keeps), and the selected head's ``K = [k_nope ;
k_pe]`` (its first columns, ``n…``, up-projected from ``c_kv``; a line marks the seam) and
``V`` (up-projected from ``c_kv``); and one sentence of the cache's bytes
per token, latent against full multi-head attention. The numbers are
:func:`~attention_explorer.pretrained.latent.view.latent_view`'s, computed on a worker thread
once per (model, text, layer); a head change only redraws. The maps are drawn by the Compare
view's :class:`~attention_explorer.ui.model.compare_view.FrameView`.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QHBoxLayout, QSpinBox, QVBoxLayout, QWidget

from attention_explorer.core.stages import DEFAULT_DIVERGING
from attention_explorer.generation.cache_size import cache_size
from attention_explorer.generation.errors import GenerationError
from attention_explorer.ui.model.compare_view import FrameView
from attention_explorer.ui.model.latent_frames import MAPS, bytes_text, latent_frames, shapes_text
from attention_explorer.ui.widgets import layout_parts as parts
from attention_explorer.ui.widgets.job_worker import JobWorker

#: The two rows of maps; each map's width follows its number of columns (set per layer),
#: so every cell is about as wide and the numbers fit alike.
_ROWS = (("c_kv", "k_pe"), ("key", "value"))


def cache_dtype(loaded) -> str:
    """The dtype the checkpoint stores its numbers in (config's ``torch_dtype``), the one
    its cache would be held in; float32 when the config names none the cache prices."""
    name = str(loaded.weights.config.get("torch_dtype") or "float32")
    try:
        cache_size(loaded, name)
    except GenerationError:
        return "float32"
    return name


class _LatentWorker(JobWorker):
    """Runs ``latent_view`` off the UI thread; ``finished((key, view))`` for the latest
    request only (an older one that ends late is dropped)."""

    def __init__(self, parent: QObject | None = None):
        super().__init__("latent stages", parent)
        self.latest = None

    def request(self, key, loaded, text: str, layer: int) -> None:
        """Compute layer ``layer`` of ``loaded`` on ``text`` and deliver it under ``key``."""
        from attention_explorer.pretrained.latent.view import latent_view

        self.latest = key

        def work() -> None:
            view = latent_view(loaded, text, layer)
            if key == self.latest:
                self.finished.emit((key, view))

        self._thread(work)


class LatentStagesDialog(QDialog):
    """The latent stages of one layer of a latent model, for the head in ``head_spin``.

    :meth:`set_source` names the model, text and layer (computed once per triple);
    :meth:`set_head` picks the head. ``view`` is the LatentView shown (None before the first
    arrives), ``frames`` its frames for the head; ``shown(view)`` after each draw."""

    shown = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("latent_stages")
        self.setWindowTitle("Latent stages")
        self.setModal(False)
        self.view = None
        self.frames = None
        self._key = None
        self._wanted_head = 0  # the head asked for, kept while the spin box's range is 0..0
        self._worker = _LatentWorker(self)
        self._worker.finished.connect(self._on_view)
        self._worker.failed.connect(self._on_failed)
        self._build()
        self._fit_screen()

    def _build(self) -> None:
        self.intro = parts.plain_label(
            "Multi-head latent attention caches one small latent per token; each head's K and "
            "V are made from it when attention reads them."
        )
        self.shapes = parts.plain_label()
        self.head_spin = QSpinBox()
        self.head_spin.setRange(0, 0)
        self.head_spin.setToolTip("The head whose k_nope, V and K are shown (follows the explorer)")
        self.head_spin.valueChanged.connect(self._on_head)
        self.note = parts.plain_label()
        self.edit_note = parts.plain_label()
        self.edit_note.setVisible(False)
        self.bytes_label = parts.plain_label()
        self.bytes_label.setObjectName("latent_bytes")
        self.maps: dict[str, FrameView] = {}
        self._rows: list[QHBoxLayout] = []
        grid = QVBoxLayout()
        for names in _ROWS:
            line = QHBoxLayout()
            for name in names:
                view = FrameView()
                view.setObjectName(f"latent_map_{name}")
                view.show_message("Computing…")
                line.addWidget(view, 1)
                self.maps[name] = view
            grid.addLayout(line, 1)
            self._rows.append(line)
        self._joint = pg.InfiniteLine(angle=90, pen=pg.mkPen("#000000", width=2))
        self._joint.setZValue(3)  # between k_nope's columns and k_pe's in the K map
        self.maps["key"].plot.addItem(self._joint)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.shapes)
        layout.addLayout(parts.row(parts.plain_label("Head"), self.head_spin, (self.note, 1)))
        layout.addWidget(self.edit_note)
        layout.addLayout(grid, 1)
        layout.addWidget(self.bytes_label)

    def _fit_screen(self) -> None:
        """As wide as a laptop screen allows (the numbers need room), never taller than it."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        room = screen.availableGeometry() if screen is not None else None
        width = 1340 if room is None else min(1340, room.width() - 20)
        height = 680 if room is None else min(680, room.height() - 60)
        self.resize(max(width, 640), max(height, 420))
        if room is not None:  # centred on the screen, its title bar on it
            self.move(
                room.x() + max(0, (room.width() - self.width()) // 2),
                room.y() + max(0, (room.height() - self.height()) // 2),
            )

    # -- what is shown ----------------------------------------------------------------------
    def set_source(self, loaded, text: str, layer: int) -> None:
        """Show layer ``layer`` of ``loaded`` on ``text`` (computed off the UI thread unless
        it is the one shown or asked for already)."""
        key = (id(loaded), loaded.name, text, int(layer))
        if key == self._key:
            return
        self._key = key
        self.note.setText(f"Computing layer {layer}…")
        self.setWindowTitle(f"Latent stages: layer {layer} of {loaded.name}")
        self.bytes_label.setText(bytes_text(cache_size(loaded, cache_dtype(loaded))))
        self._worker.request(key, loaded, text, int(layer))

    def set_head(self, head: int) -> None:
        """Show head ``head``'s up-projected maps (kept within the layer's heads; asked
        before the numbers arrive, it is taken up when they do)."""
        self._wanted_head = int(head)
        self.head_spin.setValue(int(head))

    def set_edit_note(self, text: str) -> None:
        """The line under the maps' header saying the open layer is edited ("" hides it)."""
        self.edit_note.setText(text)
        self.edit_note.setVisible(bool(text))

    # -- drawing ----------------------------------------------------------------------------
    def _on_view(self, result) -> None:
        key, view = result
        if key != self._key:
            return
        self.view = view
        heads = view.k_nope.shape[0]
        wanted = self._wanted_head
        self.head_spin.blockSignals(True)
        self.head_spin.setRange(0, heads - 1)
        self.head_spin.setValue(min(wanted, heads - 1))
        self.head_spin.blockSignals(False)
        self.shapes.setText(shapes_text(view))
        self.note.setText("")
        self._draw()

    def _on_head(self, head: int) -> None:
        self._wanted_head = head
        self._draw()

    def _on_failed(self, message: str) -> None:
        self.note.setText(f"The latent stages cannot be shown: {message}")
        for view in self.maps.values():
            view.show_message("Not available")

    def _draw(self) -> None:
        if self.view is None:
            return
        self.frames = latent_frames(self.view, self.head_spin.value())
        for name, axis_rows, axis_cols in MAPS:
            frame = self.frames.frames[name]
            self.maps[name].show_frame(frame, DEFAULT_DIVERGING, (axis_rows, axis_cols))
        for line, names in zip(self._rows, _ROWS, strict=True):
            for k, name in enumerate(names):  # wide maps get the room; + 6 for axes and bar
                line.setStretch(k, self.frames.frames[name].shape[1] + 6)
        self._joint.setPos(self.view.k_nope.shape[2])  # [n, nope | rope]: the seam of K
        self.shown.emit(self.view)
