"""Export options shared by the API and the command line (Qt-free): formats, size, DPI."""

from __future__ import annotations

from attention_explorer.writing.export_errors import ExportError

PICTURE_FORMATS = ("png", "svg", "pdf")
DATA_FORMATS = ("csv", "npy")
#: Every format ``export_all`` knows; npz writes the whole trace once.
FORMATS = PICTURE_FORMATS + DATA_FORMATS + ("npz",)
DEFAULT_SIZE = (1200, 900)
DEFAULT_DPI = 150
#: Picture sides accepted, in pixels.
MIN_SIDE, MAX_SIDE = 64, 16384


def check_size(size: tuple[int, int], dpi: float) -> tuple[int, int, float]:
    """Validate a (width, height) in pixels and a DPI; ExportError with the valid range."""
    try:
        width, height = (int(v) for v in size)
        dpi = float(dpi)
    except (TypeError, ValueError):
        raise ExportError(f"size must be two whole numbers (width, height), got {size!r}") from None
    if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
        raise ExportError(
            f"size {width}x{height} is outside {MIN_SIDE}..{MAX_SIDE} pixels per side"
        )
    if not 24 <= dpi <= 2400:
        raise ExportError(f"dpi {dpi:g} is outside 24..2400")
    return width, height, dpi


def parse_size(text: str) -> tuple[int, int]:
    """``"1200x900"`` -> (1200, 900); ExportError for anything else."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        width, height = (int(p) for p in parts)
    except ValueError:
        raise ExportError(f"size must look like 1200x900 (width x height), got {text!r}") from None
    check_size((width, height), DEFAULT_DPI)
    return width, height


def parse_formats(formats) -> tuple[str, ...]:
    """``"png,svg"`` or ``["png", "csv"]`` -> checked, de-duplicated format names."""
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    chosen = [f.strip().lower().lstrip(".") for f in items if f.strip()]
    if not chosen:
        raise ExportError(f"no format given; choose from {', '.join(FORMATS)}")
    for fmt in chosen:
        if fmt not in FORMATS:
            raise ExportError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    return tuple(dict.fromkeys(chosen))
