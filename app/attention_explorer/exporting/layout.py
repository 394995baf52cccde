"""Where everything goes on the canvas: margins, heatmap rectangles, label fonts and strides.

All lengths are in canvas pixels (for PDF/SVG: device units at the figure's DPI). The layout
only needs a ``measure(text, px, bold) -> (width, height)`` function, so it is Qt-free.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from attention_explorer.exporting.figure import Figure

Measure = Callable[[str, float, bool], tuple[float, float]]

#: Column labels wider than their cell are rotated by 45 degrees, or 90 with this many or more.
STEEP_ROTATION_FROM = 24
#: The longer side of a heatmap may be at most this many times the shorter (then cells stretch).
MIN_SIDE_FRACTION = 0.35
#: Token labels longer than this fraction of the canvas width are shortened with an ellipsis.
MAX_LABEL_FRACTION = 0.2


@dataclass
class Layout:
    """The computed geometry of one figure (see :func:`compute_layout`)."""

    width: float
    height: float
    base: float  # the body font size, px
    pad: float
    title_px: float
    title_y: float  # baseline
    subtitle_y: float
    center_x: float  # titles are centred here
    heat: list[tuple[float, float, float, float]]  # per panel (x, y, w, h)
    panel_title_px: float
    panel_title_h: float
    tick_px: float
    row_stride: int
    col_stride: int
    col_angle: int  # 0, 45 or 90
    tick_gap: float
    label_limit: float  # labels are elided to this width
    axis_px: float
    row_axis_x: float  # centre of the rotated row-axis title
    col_axis_y: float  # baseline of the column-axis title
    bar: tuple[float, float, float, float]  # colour bar (x, y, w, h)
    bar_px: float
    bar_ticks: list[tuple[float, str]]  # (value in colour-scale units, label)
    legend_y: float  # top of the "masked" legend swatch
    columns: int
    rows: int


def _grid_shape(count: int, columns: int, width: float, height: float) -> tuple[int, int]:
    if columns > 0:
        return columns, math.ceil(count / columns)
    best = (1, count)
    best_size = -1.0
    for cols in range(1, count + 1):
        rows = math.ceil(count / cols)
        size = min(width / cols, height / rows)
        if size > best_size + 1e-9:
            best, best_size = (cols, rows), size
    return best


def _label_extent(widths: list[float], height: float, angle: int) -> float:
    """Vertical room the column labels need below the heatmap."""
    widest = max(widths, default=0.0)
    if angle == 0:
        return height
    if angle == 90:
        return widest
    return (widest + height / 2) * math.sqrt(0.5)


def _left_overflow(widths: list[float], height: float, angle: int, pitch: float, stride: int):
    """How far 45-degree column labels reach left of the heatmap's left edge."""
    if angle != 45:
        return 0.0
    c = math.sqrt(0.5)
    reach = [
        w * c + height / 2 * c - (j + 0.5) * pitch for j, w in enumerate(widths) if j % stride == 0
    ]
    return max([0.0, *reach])


def compute_layout(fig: Figure, width: float, height: float, dpi: float, measure: Measure):
    """Lay out ``fig`` on a ``width`` x ``height`` canvas drawn at ``dpi``."""
    short = min(width, height)
    base = max(7.0, min(dpi * 10 / 72, short / 26))
    pad = max(base * 0.9, short * 0.035)
    title_px = base * 1.3
    sub_px = base * 0.75
    axis_px = base * 0.85
    bar_px = base * 0.75
    count = len(fig.panels)
    multi = count > 1
    panel_title_px = base * 0.8 if multi else 0.0
    label_limit = max(base * 4, width * MAX_LABEL_FRACTION)

    def fit_title(px: float) -> float:
        while px > base * 0.45 and measure(fig.title, px, True)[0] > width - 2 * pad:
            px *= 0.94
        return px

    title_px = fit_title(title_px)
    title_h = measure("Ag", title_px, True)[1]
    sub_h = measure("Ag", sub_px, False)[1] if fig.subtitle else 0.0
    top = pad + title_h + (sub_h + base * 0.2 if fig.subtitle else 0.0) + base * 0.9
    axis_h = measure("Ag", axis_px, False)[1]
    ticks = fig.ticks
    bar_label_w = max((measure(label, bar_px, False)[0] for _, label in ticks), default=0.0)
    if fig.scale_caption:
        bar_label_w = max(bar_label_w, measure(fig.scale_caption, bar_px, False)[0])
    bar_w = base * 0.9
    bar_gap = base * 0.9
    legend_text = measure("masked (−∞)", bar_px, False)[0]
    legend_w = bar_w + base * 0.4 + legend_text if fig.has_masked else 0
    right = bar_gap + max(bar_w + base * 0.3 + bar_label_w, legend_w) + pad
    panel_title_h = measure("Ag", panel_title_px, True)[1] * 1.35 if multi else 0.0
    panel_gap = base * 1.1 if multi else 0.0

    rows0 = max(p.values.shape[0] for p in fig.panels)
    cols0 = max(p.values.shape[1] for p in fig.panels)
    row_labels = max(fig.panels, key=lambda p: len(p.row_labels)).row_labels
    col_labels = max(fig.panels, key=lambda p: len(p.col_labels)).col_labels

    tick_gap = base * 0.35
    min_px = max(base * 0.45, 6.0)

    def geometry(tick_px: float, angle: int, row_stride: int, col_stride: int):
        label_h = measure("Ag", tick_px, False)[1]
        row_w = [min(measure(t, tick_px, False)[0], label_limit) for t in row_labels]
        col_w = [min(measure(t, tick_px, False)[0], label_limit) for t in col_labels]
        row_block = max(row_w[::row_stride], default=0.0) + tick_gap
        left = pad + axis_h + base * 0.5 + row_block
        label_extent = _label_extent(col_w[::col_stride], label_h, angle)
        bottom = tick_gap + label_extent + base * 0.5 + axis_h + pad
        avail_w = width - left - right
        avail_h = height - top - bottom
        grid_cols, grid_rows = _grid_shape(count, fig.columns, avail_w, avail_h)
        pw = max(1.0, (avail_w - (grid_cols - 1) * panel_gap) / grid_cols)
        ph = max(
            1.0, (avail_h - grid_rows * panel_title_h - (grid_rows - 1) * panel_gap) / grid_rows
        )
        side = min(pw / cols0, ph / rows0)
        hw = max(cols0 * side, min(pw, MIN_SIDE_FRACTION * ph))
        hh = max(rows0 * side, min(ph, MIN_SIDE_FRACTION * pw))
        return dict(
            label_h=label_h,
            col_w=col_w,
            row_block=row_block,
            bottom=bottom,
            label_extent=label_extent,
            grid_cols=grid_cols,
            grid_rows=grid_rows,
            hw=hw,
            hh=hh,
        )

    def labels_for(g) -> tuple[float, int, int, int]:
        pitch_c, pitch_r = g["hw"] / cols0, g["hh"] / rows0
        tick_px = min(base * 0.8, max(min_px, max(pitch_r, pitch_c) * 0.72))
        label_h = measure("Ag", tick_px, False)[1]
        row_stride = max(1, math.ceil(label_h * 1.1 / pitch_r))
        col_w = [min(measure(t, tick_px, False)[0], label_limit) for t in col_labels]
        if max(col_w, default=0) <= pitch_c * 0.92 or cols0 == 1:
            return tick_px, 0, row_stride, 1
        angle = 45 if cols0 < STEEP_ROTATION_FROM else 90
        need = label_h * (1.45 if angle == 45 else 1.1)
        return tick_px, angle, row_stride, max(1, math.ceil(need / pitch_c))

    settings = (base * 0.8, 0, 1, 1)
    for _ in range(3):
        settings = labels_for(geometry(*settings))
    g = geometry(*settings)
    tick_px, angle, row_stride, col_stride = settings
    hw, hh, grid_cols, grid_rows = g["hw"], g["hh"], g["grid_cols"], g["grid_rows"]
    row_block, bottom, label_h, col_w = g["row_block"], g["bottom"], g["label_h"], g["col_w"]
    label_extent = g["label_extent"]
    pitch_c = hw / cols0
    overflow = _left_overflow(col_w, label_h, angle, pitch_c, col_stride)
    left_block = max(row_block + axis_h + base * 0.5, overflow)
    grid_w = grid_cols * hw + (grid_cols - 1) * panel_gap
    grid_h = grid_rows * (hh + panel_title_h) + (grid_rows - 1) * panel_gap
    bar_x_extent = right - pad
    total_w = left_block + grid_w + bar_x_extent
    x0 = max(pad, (width - total_w) / 2) + left_block
    body_h = grid_h + bottom - pad
    y0 = top + max(0.0, (height - top - pad - body_h) / 2) + panel_title_h
    heat = []
    for index in range(count):
        gr, gc = divmod(index, grid_cols)
        heat.append(
            (x0 + gc * (hw + panel_gap), y0 + gr * (hh + panel_title_h + panel_gap), hw, hh)
        )
    grid_bottom = y0 - panel_title_h + grid_h
    bar = (x0 + grid_w + bar_gap, y0, bar_w, grid_bottom - y0)
    return Layout(
        width=width,
        height=height,
        base=base,
        pad=pad,
        title_px=title_px,
        title_y=pad + measure("Ag", title_px, True)[1] * 0.78,
        subtitle_y=pad + title_h + base * 0.2 + sub_h * 0.78,
        center_x=(x0 - left_block + (x0 + grid_w + bar_x_extent)) / 2,
        heat=heat,
        panel_title_px=panel_title_px,
        panel_title_h=panel_title_h,
        tick_px=tick_px,
        row_stride=row_stride,
        col_stride=col_stride,
        col_angle=angle,
        tick_gap=tick_gap,
        label_limit=label_limit,
        axis_px=axis_px,
        row_axis_x=x0 - row_block - base * 0.5 - axis_h / 2,
        col_axis_y=grid_bottom + tick_gap + label_extent + base * 0.5 + axis_h * 0.78,
        bar=bar,
        bar_px=bar_px,
        bar_ticks=ticks,
        legend_y=grid_bottom + base * 0.6,
        columns=grid_cols,
        rows=grid_rows,
    )
