"""Point the figure renderer at a target: QImage (PNG), QSvgGenerator (SVG), QPdfWriter (PDF)."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSize, QSizeF
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter

from attention_explorer.exporting.figure import Figure
from attention_explorer.exporting.options import PICTURE_FORMATS, check_size
from attention_explorer.exporting.painter import paint_figure
from attention_explorer.exporting.qt_app import ensure_gui_app
from attention_explorer.writing.export_errors import ExportError


def render_image(fig: Figure, size: tuple[int, int], dpi: float) -> QImage:
    """The figure as a QImage of exactly ``size`` pixels, tagged with ``dpi``."""
    width, height, dpi = check_size(size, dpi)
    ensure_gui_app()
    image = QImage(width, height, QImage.Format.Format_RGB32)
    dots_per_meter = round(dpi / 0.0254)
    image.setDotsPerMeterX(dots_per_meter)
    image.setDotsPerMeterY(dots_per_meter)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    try:
        paint_figure(painter, fig, width, height, dpi)
    finally:
        painter.end()
    return image


def _buffer() -> tuple[QByteArray, QBuffer]:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    return data, buffer


def _contents(data: QByteArray, buffer: QBuffer) -> bytes:
    """What was written into ``buffer`` (closed first), as bytes."""
    buffer.close()
    return bytes(data.data())


def _paint_on(device, fig: Figure, width: int, height: int, dpi: float, what: str) -> None:
    """Paint ``fig`` on a vector ``device`` (SVG generator, PDF writer) of that size."""
    painter = QPainter()
    if not painter.begin(device):
        raise ExportError(f"Qt could not start the {what} picture")
    try:
        paint_figure(painter, fig, width, height, dpi)
    finally:
        painter.end()


def png_bytes(fig: Figure, size: tuple[int, int], dpi: float) -> bytes:
    """The figure as PNG file content."""
    image = render_image(fig, size, dpi)
    data, buffer = _buffer()
    if not image.save(buffer, "PNG"):
        raise ExportError("Qt could not encode the PNG picture")
    return _contents(data, buffer)


def svg_bytes(fig: Figure, size: tuple[int, int], dpi: float) -> bytes:
    """The figure as SVG file content (text stays text, so token names are searchable)."""
    from PySide6.QtSvg import QSvgGenerator

    width, height, dpi = check_size(size, dpi)
    ensure_gui_app()
    data, buffer = _buffer()
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(width, height))
    generator.setViewBox(QRectF(0, 0, width, height))
    generator.setResolution(round(dpi))
    generator.setTitle(fig.title)
    generator.setDescription(fig.subtitle or fig.title)
    _paint_on(generator, fig, width, height, dpi, "SVG")
    return _contents(data, buffer)


def pdf_bytes(fig: Figure, size: tuple[int, int], dpi: float) -> bytes:
    """The figure as a one-page PDF whose page is exactly the figure's size."""
    from PySide6.QtGui import QPdfWriter

    width, height, dpi = check_size(size, dpi)
    ensure_gui_app()
    data, buffer = _buffer()
    writer = QPdfWriter(buffer)
    writer.setResolution(round(dpi))
    page = QPageSize(
        QSizeF(width * 72.0 / dpi, height * 72.0 / dpi),
        QPageSize.Unit.Point,
        "figure",
        QPageSize.SizeMatchPolicy.ExactMatch,
    )
    writer.setPageLayout(QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
    writer.setTitle(fig.title)
    writer.setCreator("Attention Explorer")
    _paint_on(writer, fig, writer.width(), writer.height(), dpi, "PDF")
    return _contents(data, buffer)


def picture_bytes(fig: Figure, fmt: str, size: tuple[int, int], dpi: float) -> bytes:
    """The figure encoded as ``fmt`` (png, svg or pdf)."""
    if fmt == "png":
        return png_bytes(fig, size, dpi)
    if fmt == "svg":
        return svg_bytes(fig, size, dpi)
    if fmt == "pdf":
        return pdf_bytes(fig, size, dpi)
    raise ExportError(f"unknown picture format {fmt!r}; choose from {', '.join(PICTURE_FORMATS)}")
