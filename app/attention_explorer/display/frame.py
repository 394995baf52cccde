"""DisplayFrame: everything one view or one picture panel shows of one stage and head.

:func:`build_frame` turns a stage of a Trace (or a region of it, when zoomed) into the image
at display resolution, the masked cells, the colour levels and colour-bar ticks, the labels,
the cell texts and the title. The window's HeatmapView and the exports both draw frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_explorer.core.stages import stage, title
from attention_explorer.display.cells import cell_texts
from attention_explorer.display.levels import (
    apply_scale,
    colorbar_ticks,
    levels_for,
    levels_from_range,
)
from attention_explorer.display.shrink import (
    DISPLAY_LIMIT,
    Shrunk,
    fits_float32,
    rule_words,
    shrink,
    shrink_rule,
    signed_levels,
)

#: Cell texts are prepared for at most this many rows and columns (beyond, the tooltip).
MAX_TEXT_CELLS = 24


@dataclass(frozen=True)
class DisplayFrame:
    """One stage and head as shown: image, masked cells, levels, labels, texts and title.

    ``region`` is (first row, end row, first column, end column) of the full stage shown;
    ``image [r, c]`` is in colour-scale units (finite), ``masked_cells [r, c]`` marks masked cells;
    ``texts`` has one string per shown cell, row by row, or is empty when the cells are
    blocks or too many to write.
    """

    stage: str
    head: int | None
    heading: str
    shape: tuple[int, int]
    region: tuple[int, int, int, int]
    image: np.ndarray
    masked_cells: np.ndarray
    block: tuple[int, int]
    levels: tuple[float, float]
    ticks: list[tuple[float, str]]
    scale_caption: str
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    texts: list[str]
    decimals: int

    @property
    def zoomed(self) -> bool:
        """True when the frame shows part of the stage, not all of it."""
        rows, cols = self.shape
        return self.region != (0, rows, 0, cols)

    def same_as(self, other: DisplayFrame) -> bool:
        """True when ``other`` shows exactly the same: every field equal, arrays cell by cell
        (and of the same dtype), so a view may keep what it drew."""
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, np.ndarray):
                if not isinstance(theirs, np.ndarray) or mine.dtype != theirs.dtype:
                    return False
                if not np.array_equal(mine, theirs):
                    return False
            elif mine != theirs:
                return False
        return True

    def positions(self) -> np.ndarray:
        """Each shown cell's place along the colour map, 0..1 ``[r, c]``."""
        low, high = self.levels
        with np.errstate(over="ignore", invalid="ignore"):
            return np.clip((self.image.astype(np.float64) - low) / (high - low), 0.0, 1.0)


def shrink_note(shape: tuple[int, int], shrunk: Shrunk, name: str = "") -> str:
    """How a view was shrunk, in full: "4096×4096 shown as 512×512, max of 8×8 blocks"
    (signed stages add how their colours were fitted, see :func:`rule_words`)."""
    if not shrunk.shrunk:
        return ""
    rows, cols = shape
    r, c = shrunk.image.shape
    how = rule_words(name, shrunk) if name else f"{shrunk.how} of BLOCK blocks"
    return f"{rows}×{cols} shown as {r}×{c}, " + how.replace(
        "BLOCK", f"{shrunk.block[0]}×{shrunk.block[1]}"
    )


def stage_heading(trace, name: str, head: int | None, note: str = "") -> str:
    """ "softmax weights · head 0", plus the shrink or zoom ``note`` when there is one."""
    parts = [title(name, trace.config.normalizer)]
    if head is not None:
        parts.append(f"head {head}")
    if note:
        parts.append(note)
    return " · ".join(parts)


def _zoom_note(shape, region) -> str:
    r0, r1, c0, c1 = region
    return f"rows {r0}–{r1 - 1}, columns {c0}–{c1 - 1} of {shape[0]}×{shape[1]}"


def _preview(trace, name: str):
    """The pass's preview of stage ``name`` (:mod:`attention_explorer.engine.preview`), or None."""
    return trace.preview(name) if hasattr(trace, "preview") else None


def _preview_shrunk(preview, index: int) -> Shrunk:
    """One head's (``index``) picture from a preview."""
    image = fits_float32(preview.image[index])
    return Shrunk(image, preview.masked_cells[index], preview.block, preview.how)


def stage_picture(trace, name: str, head: int | None, limit: int = DISPLAY_LIMIT) -> Shrunk:
    """Stage ``name`` of ``head`` shrunk to at most ``limit`` cells a side (a thumbnail):
    from the pass's preview when it made one (shrunk further by the same rule when ``limit``
    is smaller), else from the stage itself."""
    entry, rule = stage(name), shrink_rule(name)
    head = head if entry.per_head else None
    preview = _preview(trace, name)
    if preview is None or preview.limit < limit or preview.how != rule:
        return shrink(trace.stage(name, head), rule, limit)
    index = 0 if head is None else trace.head_index(head)
    picture = _preview_shrunk(preview, index)
    if max(picture.image.shape) <= limit:
        return picture
    blank_as_masked = np.where(picture.masked_cells, -np.inf, picture.image)  # [R, C]
    again = shrink(blank_as_masked, rule, limit)
    fr, fc = picture.block
    return Shrunk(again.image, again.masked_cells, (fr * again.block[0], fc * again.block[1]), rule)


def build_frame(
    trace,
    name: str,
    head: int | None,
    *,
    region: tuple[int, int, int, int] | None = None,
    scale: str = "linear",
    decimals: int | None = None,
    limit: int = DISPLAY_LIMIT,
) -> DisplayFrame:
    """The frame of stage ``name`` (head ``head``; None for shared stages) of ``trace``.

    ``region`` (rows r0:r1, columns c0:c1) zooms in: its cells are taken from the
    full-resolution stage (rows recomputed when the pass kept a preview instead), shrunk only
    when the region itself exceeds ``limit``; the whole stage comes from the pass's preview
    when it made one at ``limit``. ``scale`` is a colour scale of
    :data:`~attention_explorer.display.levels.SCALES`; ``decimals`` defaults to the
    catalogue's.
    """
    entry = stage(name)
    head = head if entry.per_head else None
    full = trace.stage(name, head)  # [rows, cols]: an array, or rows recomputed when read
    rows, cols = full.shape
    r0, r1, c0, c1 = region if region is not None else (0, rows, 0, cols)
    r0, c0 = max(0, min(r0, rows - 1)), max(0, min(c0, cols - 1))
    r1, c1 = max(r0 + 1, min(r1, rows)), max(c0 + 1, min(c1, cols))
    zoomed = (r0, r1, c0, c1) != (0, rows, 0, cols)
    preview = _preview(trace, name)
    index = 0 if head is None else trace.head_index(head)
    rule = shrink_rule(name)
    if preview is not None and preview.limit == limit and not zoomed and preview.how == rule:
        part, part_shape = None, (rows, cols)  # the pass shrank it already, block by block
        shrunk = _preview_shrunk(preview, index)
    else:
        part = np.asarray(full[r0:r1, c0:c1])  # [r1-r0, c1-c0], a view of an array
        part_shape = part.shape
        shrunk = shrink(part, rule, limit)
    if preview is not None:  # the range of the whole stage, found while it was computed
        full_levels = levels_from_range(name, preview.low[index], preview.high[index])
    else:
        full_levels = None
    if scale == "linear" or not entry.scalable:
        # Levels follow the whole stage at full resolution: zooming in or shrinking by block
        # means never changes what a colour stands for.
        image, caption = shrunk.image, ""
        levels = full_levels if full_levels is not None else levels_for(name, full)
        levels = signed_levels(name, shrunk) or levels  # signed block means: fitted to them
        ticks = colorbar_ticks(levels)
    else:
        image, levels, ticks, caption = apply_scale(name, shrunk.image, scale)
    note = _zoom_note((rows, cols), (r0, r1, c0, c1)) if zoomed else ""
    note = " · ".join(p for p in (note, shrink_note(part_shape, shrunk, name)) if p)
    digits = entry.decimals if decimals is None else int(decimals)
    small = part_shape[0] <= MAX_TEXT_CELLS and part_shape[1] <= MAX_TEXT_CELLS
    texts = cell_texts(name, part, digits) if small and not shrunk.shrunk else []
    return DisplayFrame(
        stage=name,
        head=head,
        heading=stage_heading(trace, name, head, note),
        shape=(rows, cols),
        region=(r0, r1, c0, c1),
        image=image,
        masked_cells=shrunk.masked_cells,
        block=shrunk.block,
        levels=levels,
        ticks=ticks,
        scale_caption=caption,
        row_labels=tuple(trace.row_labels(name))[r0:r1],
        col_labels=tuple(trace.col_labels(name))[c0:c1],
        texts=texts,
        decimals=digits,
    )
