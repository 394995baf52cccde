"""What a picture shows, independent of how it is drawn: panels, labels, levels, title."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from attention_explorer.core.stage_colours import DEFAULT_DIVERGING, DEFAULT_SEQUENTIAL
from attention_explorer.core.stage_rules import upstream_words
from attention_explorer.core.stages import FOCUS_STAGE, stage as catalogue_stage
from attention_explorer.display import DisplayFrame, build_frame, stage_heading
from attention_explorer.display.levels import colorbar_ticks, levels_for
from attention_explorer.display.shrink import block_labels
from attention_explorer.engine.trace import Trace
from attention_explorer.exporting.colors import default_cmap, lookup_table
from attention_explorer.exporting.safe_text import plain_text
from attention_explorer.exporting.stages import (
    axis_names,
    resolve_head,
    resolve_heads,
    resolve_stage,
)
from attention_explorer.writing.export_errors import ExportError


@dataclass
class Panel:
    """One heatmap: the shown cells, which are masked, their texts and their labels.

    ``values [r, c]`` are in colour-scale units (finite); ``masked_cells [r, c]`` marks the
    masked cells;
    ``texts`` has one string per cell, row by row (empty: no numbers to write).
    """

    values: np.ndarray
    masked_cells: np.ndarray
    texts: list[str]
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    title: str = ""

    @classmethod
    def from_frame(cls, frame: DisplayFrame, title: str = "") -> Panel:
        """The panel that draws ``frame`` (block labels where cells are blocks)."""
        return cls(
            values=frame.image,
            masked_cells=frame.masked_cells,
            texts=frame.texts,
            row_labels=tuple(map(plain_text, block_labels(frame.row_labels, frame.block[0]))),
            col_labels=tuple(map(plain_text, block_labels(frame.col_labels, frame.block[1]))),
            title=plain_text(title),
        )


@dataclass
class Figure:
    """Everything one picture shows; :mod:`attention_explorer.exporting.painter` draws it."""

    panels: list[Panel]
    title: str
    subtitle: str
    levels: tuple[float, float]
    ticks: list[tuple[float, str]]
    cmap: str
    row_axis: str
    col_axis: str
    show_values: bool
    columns: int = 0  # panels per grid row; 0 = whatever makes cells largest
    auto_values: bool = True  # values were not asked for explicitly: hide them when tiny
    col_group: int = 0  # draw a divider every this many columns (concat: one block per head)
    scale_caption: str = ""  # how the colour bar reads when not linear ("÷ row max")
    notes: list[str] = field(default_factory=list)

    @property
    def has_masked(self) -> bool:
        """True when some cell is masked (drawn grey with "−∞", with a legend)."""
        return any(p.masked_cells.any() for p in self.panels)


def _describe(trace: Trace, stage: str) -> str:
    """The token count, then the settings upstream of ``stage`` (from the catalogue)."""
    tokens = (
        f"{trace.n_queries}×{trace.n_keys} tokens"
        if trace.n_keys != trace.n_queries
        else f"{trace.n_queries} tokens"
    )
    return " · ".join([tokens, *upstream_words(stage, trace)])


def _with_name(default: str, name: str | None) -> str:
    """The default title, followed by the example or session name when it has a real one."""
    return f"{default} · {name}" if name and name.strip() not in ("", "Untitled") else default


def _auto_values(show_values: bool | None, panels: list[Panel]) -> bool:
    if show_values is not None:
        return bool(show_values) and all(p.texts for p in panels)
    return all(p.texts for p in panels)


def _frames_figure(trace, stage, frames, panels, *, title, cmap, show_values):
    entry = catalogue_stage(stage)
    levels, ticks = frames[0].levels, frames[0].ticks
    if len(frames) > 1 and entry.fixed_levels is None and frames[0].scale_caption == "":
        levels = levels_for(stage, np.stack([trace.stage(stage, f.head) for f in frames]))
        ticks = colorbar_ticks(levels)
    row_axis, col_axis = axis_names(stage)
    grouped = entry.head_blocks and trace.config.heads > 1
    return Figure(
        panels=panels,
        title=plain_text(title),
        subtitle=plain_text(_describe(trace, stage)),
        levels=levels,
        ticks=ticks,
        cmap=cmap,
        row_axis=row_axis,
        col_axis=col_axis,
        show_values=_auto_values(show_values, panels),
        auto_values=show_values is None,
        col_group=trace.config.value_dim if grouped and frames[0].block == (1, 1) else 0,
        scale_caption=frames[0].scale_caption,
    )


@dataclass(frozen=True)
class Look:
    """How a figure is drawn, apart from its numbers.

    ``title`` replaces the default (the window's title, e.g. "softmax weights · head 0",
    followed by ``name``, the example or session). ``cmap`` is a colour map name (default:
    the stage's). ``show_values`` writes the numbers in the cells (None: only while they fit).
    ``decimals`` defaults to the stage's (the screen's digits); ``scale`` is the weights'
    colour scale (linear, row, log).
    """

    title: str | None = None
    name: str | None = None
    cmap: str | None = None
    show_values: bool | None = None
    decimals: int | None = None
    scale: str = "linear"

    @classmethod
    def from_options(cls, options: dict[str, object], also: tuple[str, ...] = ()) -> Look:
        """The look named by keyword ``options``; TypeError names any unknown one and lists
        the known ones (``also``: the caller's own keywords, such as size and dpi)."""
        known = [f.name for f in fields(cls)] + list(also)
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TypeError(f"unknown picture option {', '.join(unknown)}; use {', '.join(known)}")
        return cls(**options)

    def checked_decimals(self) -> int | None:
        """``decimals`` checked: None (the stage's, as on screen) or a whole number 0..12."""
        d = self.decimals
        if d is not None and (isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= 12):
            raise ExportError(f"decimals must be a whole number from 0 to 12, got {d!r}")
        return d

    def chosen_cmap(self, stage: str) -> str:
        """The colour map to draw ``stage`` with; an unknown name fails before any drawing."""
        cmap = self.cmap or default_cmap(stage)
        lookup_table(cmap)
        return cmap


def _frames(trace: Trace, stage: str, heads, look: Look) -> list[DisplayFrame]:
    """The window's display frame of ``stage`` for each of ``heads``."""
    decimals = look.checked_decimals()
    return [build_frame(trace, stage, h, scale=look.scale, decimals=decimals) for h in heads]


def stage_figure(trace: Trace, stage: str, head: int | None = None, **options) -> Figure:
    """The figure of one stage and head (head ignored for shared stages): the same
    :class:`~attention_explorer.display.DisplayFrame` the window draws. ``options`` are the
    fields of :class:`Look`.
    """
    look = Look.from_options(options)
    stage = resolve_stage(trace, stage)
    head = resolve_head(trace, stage, head)
    cmap = look.chosen_cmap(stage)
    (frame,) = _frames(trace, stage, [head], look)
    return _frames_figure(
        trace,
        stage,
        [frame],
        [Panel.from_frame(frame)],
        title=look.title or _with_name(frame.heading, look.name),
        cmap=cmap,
        show_values=look.show_values,
    )


def grid_figure(trace: Trace, stage: str = FOCUS_STAGE, heads=None, **options) -> Figure:
    """One panel per head of a per-head stage, sharing one colour scale and colour bar.

    ``options`` are the fields of :class:`Look`.
    """
    look = Look.from_options(options)
    stage = resolve_stage(trace, stage)
    resolve_head(trace, stage, None)
    chosen = resolve_heads(trace, heads)
    cmap = look.chosen_cmap(stage)
    frames = _frames(trace, stage, chosen, look)
    panels = [Panel.from_frame(f, title=f"head {f.head}") for f in frames]
    heading = stage_heading(trace, stage, None, "all heads")
    note = frames[0].heading.partition(f"head {frames[0].head}")[2].lstrip(" ·")
    heading = " · ".join(p for p in (heading, note) if p)
    return _frames_figure(
        trace,
        stage,
        frames,
        panels,
        title=look.title or _with_name(heading, look.name),
        cmap=cmap,
        show_values=look.show_values,
    )


def frame_figure(
    frame: DisplayFrame,
    kind: str,
    *,
    row_axis: str = "rows",
    col_axis: str = "columns",
    subtitle: str = "",
    **options,
) -> Figure:
    """The figure of any display frame, e.g. of :func:`attention_explorer.display.
    frame_for_array` (a difference map): the same drawing as a stage's. ``kind`` ("signed",
    "unit", "free") picks the default colour map; ``options`` are the fields of :class:`Look`
    (``decimals`` and ``scale`` belong to the frame, which is already built)."""
    look = Look.from_options(options)
    cmap = look.cmap or (DEFAULT_DIVERGING if kind == "signed" else DEFAULT_SEQUENTIAL)
    lookup_table(cmap)  # an unknown name fails before any drawing
    panels = [Panel.from_frame(frame)]
    return Figure(
        panels=panels,
        title=plain_text(look.title or _with_name(frame.heading, look.name)),
        subtitle=plain_text(subtitle),
        levels=frame.levels,
        ticks=frame.ticks,
        cmap=cmap,
        row_axis=plain_text(row_axis),
        col_axis=plain_text(col_axis),
        show_values=_auto_values(look.show_values, panels),
        auto_values=look.show_values is None,
        scale_caption=frame.scale_caption,
    )
