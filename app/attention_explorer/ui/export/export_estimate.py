"""How long and how much memory a picture export will take, measured first, as the sweep does.

A PNG of width x height pixels is painted into an image of 4 bytes a pixel and then encoded:
its time grows with the pixels (16384 x 16384 at the largest size: about 14 s and 1.1 GB).
Above :data:`PROBE_ABOVE_PIXELS` the same stage is painted and encoded once at
:data:`PROBE_SIDE` pixels a side on this machine, and the time is scaled by the pixels; the
dialogs ask before an export estimated at more than :data:`ASK_SECONDS`. SVG and PDF are drawn
as vectors: their cost does not grow with the size, so they are not estimated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtWidgets import QMessageBox, QWidget

from attention_explorer.ui.widgets import dialogs

#: Pictures up to this many pixels (2048 x 2048) are exported without an estimate.
PROBE_ABOVE_PIXELS = 2048 * 2048
#: The side of the picture measured for an estimate, in pixels.
PROBE_SIDE = 1024
#: Exports estimated to take longer than this ask first.
ASK_SECONDS = 3.0
#: Bytes a pixel of the painted image takes (ARGB32).
BYTES_PER_PIXEL = 4


@dataclass(frozen=True)
class ExportCost:
    """An export's estimated time (seconds) and peak memory (bytes) for ``pictures``."""

    seconds: float
    memory: int
    pictures: int = 1

    def text(self) -> str:
        """'about 14 s and 1.1 GB of memory' (the memory of one picture at a time)."""
        gb = self.memory / 1e9
        memory = f"{gb:.1f} GB" if gb >= 0.1 else f"{self.memory / 1e6:.0f} MB"
        return f"about {self.seconds:.0f} s and {memory} of memory"


def _probe_seconds(trace, stage: str, head: int | None, size, dpi: float, look: dict) -> float:
    """Seconds to paint and encode one PNG of ``stage`` at PROBE_SIDE pixels (same shape)."""
    from attention_explorer.exporting.stage_exports import render_stage_image

    width, height = size
    scale = PROBE_SIDE / max(width, height)
    probe = (max(64, round(width * scale)), max(64, round(height * scale)))
    start = time.perf_counter()
    image = render_stage_image(trace, stage, head, size=probe, dpi=dpi, **look)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return (time.perf_counter() - start) * (width * height) / (probe[0] * probe[1])


def estimate_export(
    trace, stage: str, head: int | None, fmt: str, size, dpi: float, look: dict, pictures: int = 1
) -> ExportCost | None:
    """The cost of exporting ``pictures`` PNGs like ``stage``/``head`` at ``size`` (measured
    on a small one); None when it is small or not a raster picture (nothing to ask)."""
    width, height = size
    if fmt != "png" or width * height <= PROBE_ABOVE_PIXELS:
        return None
    seconds = _probe_seconds(trace, stage, head, size, dpi, look) * pictures
    return ExportCost(seconds, width * height * BYTES_PER_PIXEL, pictures)


def confirm_export(parent: QWidget, cost: ExportCost | None, what: str) -> bool:
    """True to go on: at once when ``cost`` is small, else when the learner says Export."""
    if cost is None or cost.seconds <= ASK_SECONDS:
        return True
    files = f" ({cost.pictures} pictures)" if cost.pictures > 1 else ""
    answer = dialogs.question(
        parent,
        "A large export",
        f"Exporting {what}{files} will take {cost.text()}. Export anyway? "
        "A smaller size is quicker.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes
