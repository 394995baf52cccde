"""What a picture shows, independent of how it is drawn: panels, labels, levels, title."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attention_explorer.engine.trace import Trace
from attention_explorer.export.colors import color_levels, default_cmap, lookup_table
from attention_explorer.export.downsample import MAX_CELLS, block_labels, block_reduce
from attention_explorer.export.stages import (
    axis_names,
    resolve_head,
    resolve_heads,
    resolve_stage,
    stage_matrix,
    stage_title,
)

#: Values are written in the cells automatically up to this many rows and columns.
AUTO_VALUES_MAX = 16


@dataclass
class Panel:
    """One heatmap: a 2-D matrix (non-finite = masked) and its row and column labels."""

    values: np.ndarray
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    title: str = ""


@dataclass
class Figure:
    """Everything one picture shows; :mod:`attention_explorer.export.painter` draws it."""

    panels: list[Panel]
    title: str
    subtitle: str
    levels: tuple[float, float]
    cmap: str
    row_axis: str
    col_axis: str
    show_values: bool
    columns: int = 0  # panels per grid row; 0 = whatever makes cells largest
    auto_values: bool = True  # values were not asked for explicitly: hide them when tiny
    col_group: int = 0  # draw a divider every this many columns (concat: one block per head)
    notes: list[str] = field(default_factory=list)

    @property
    def has_masked(self) -> bool:
        """True when some cell is masked (drawn hatched, with a legend)."""
        return any(not np.isfinite(p.values).all() for p in self.panels)


def _describe(trace: Trace, stage: str) -> str:
    config = trace.config
    parts = [f"{trace.n_queries}×{trace.n_keys} tokens" if trace.n_keys != trace.n_queries
             else f"{trace.n_queries} tokens"]  # fmt: skip
    if stage in ("scaled", "masked", "weights", "head_outputs", "concat", "output"):
        parts.append(f"scale {trace.scale:.4g}")
        if config.temperature != 1.0:
            parts.append(f"temperature {config.temperature:g}")
    if stage in ("mask", "masked", "weights", "head_outputs", "concat", "output"):
        parts.append(f"{config.mask} mask" if config.mask != "none" else "no mask")
    if stage in ("weights", "head_outputs", "concat", "output"):
        parts.append(config.normalizer)
    if stage == "concat":
        parts.append(f"{config.heads} heads × d_v {config.value_dim}")
    return " · ".join(parts)


def _with_name(default: str, name: str | None) -> str:
    """The default title, followed by the example or session name when it has a real one."""
    return f"{default} · {name}" if name and name.strip() not in ("", "Untitled") else default


def _panel(trace: Trace, stage: str, head: int | None, title: str = "") -> tuple[Panel, str]:
    values = stage_matrix(trace, stage, head)
    rows, cols = values.shape
    how = "max" if stage == "weights" else "mean"
    reduced, fr, fc = block_reduce(values, MAX_CELLS, how)
    note = ""
    if (fr, fc) != (1, 1):
        note = (f"{rows}×{cols} shown as {reduced.shape[0]}×{reduced.shape[1]} blocks "
                f"of {fr}×{fc} (block {how})")  # fmt: skip
    panel = Panel(
        values=reduced,
        row_labels=block_labels(tuple(trace.row_labels(stage)), fr),
        col_labels=block_labels(tuple(trace.col_labels(stage)), fc),
        title=title,
    )
    return panel, note


def _auto_values(show_values: bool | None, panels: list[Panel]) -> bool:
    if show_values is not None:
        return bool(show_values)
    return all(max(p.values.shape) <= AUTO_VALUES_MAX for p in panels)


def stage_figure(
    trace: Trace,
    stage: str,
    head: int | None = None,
    *,
    title: str | None = None,
    name: str | None = None,
    cmap: str | None = None,
    show_values: bool | None = None,
) -> Figure:
    """The figure of one stage and head (head ignored for shared stages).

    ``title`` replaces the default ("Attention weights · head 0 · NAME").
    """
    stage = resolve_stage(trace, stage)
    head = resolve_head(trace, stage, head)
    cmap = cmap or default_cmap(stage)
    lookup_table(cmap)  # unknown names fail before any drawing
    panel, note = _panel(trace, stage, head)
    default = stage_title(stage) + (f" · head {head}" if head is not None else "")
    row_axis, col_axis = axis_names(stage)
    return Figure(
        panels=[panel],
        title=title or _with_name(default, name),
        subtitle=" · ".join(p for p in (_describe(trace, stage), note) if p),
        levels=color_levels(stage, panel.values),
        cmap=cmap,
        row_axis=row_axis,
        col_axis=col_axis,
        show_values=_auto_values(show_values, [panel]),
        auto_values=show_values is None,
        col_group=trace.config.value_dim if stage == "concat" and trace.config.heads > 1 else 0,
    )


def grid_figure(
    trace: Trace,
    stage: str = "weights",
    heads=None,
    *,
    title: str | None = None,
    name: str | None = None,
    cmap: str | None = None,
    show_values: bool | None = None,
) -> Figure:
    """One panel per head of a per-head stage, sharing one colour scale and colour bar."""
    stage = resolve_stage(trace, stage)
    resolve_head(trace, stage, None)
    chosen = resolve_heads(trace, heads)
    cmap = cmap or default_cmap(stage)
    lookup_table(cmap)
    panels, notes = [], []
    for head in chosen:
        panel, note = _panel(trace, stage, head, title=f"head {head}")
        panels.append(panel)
        notes.append(note)
    every = np.concatenate([p.values.ravel() for p in panels])
    default = f"{stage_title(stage)} · all heads"
    row_axis, col_axis = axis_names(stage)
    return Figure(
        panels=panels,
        title=title or _with_name(default, name),
        subtitle=" · ".join(p for p in (_describe(trace, stage), notes[0]) if p),
        levels=color_levels(stage, every),
        cmap=cmap,
        row_axis=row_axis,
        col_axis=col_axis,
        show_values=_auto_values(show_values, panels),
        auto_values=show_values is None,
    )
