"""Previews: the square stages of a long sequence at display resolution, made while computing.

A pass at n = 4096 makes each head's scores, scaled, masked and weights one block of query
rows at a time (:mod:`.row_blocks`). With a preview limit, each block is shrunk to display
resolution right away, while it is still in the processor's cache, by the catalogue's rule
(block max for weights and the mask, block mean elsewhere: :func:`~attention_explorer.core.blocks.
reduce_blocks`, the same function the views use), and the [n, m] stage is never
stored. What the views need besides the picture comes along: the finite range of the whole
stage (its colour levels) and, for the weights, each query's lowest and highest weight over
the keys it may see (the walkthrough's choice of query). Full-resolution rows are recomputed
on demand (:mod:`.recompute`).

Row blocks start at multiples of the block height, so a preview is exactly the shrink of the
full stage.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_explorer.core.blocks import DISPLAY_LIMIT, block_factors, reduce_blocks
from attention_explorer.core.stages import stage
from attention_explorer.engine.cache import EngineCache

#: A stage whose rows or columns exceed this many is previewed by default.
PREVIEW_LIMIT = DISPLAY_LIMIT


@dataclass(frozen=True)
class StagePreview:
    """One stage of the kept heads at display resolution (shared stages: one "head").

    ``image [s, R, C]`` (finite, masked blocks 0), ``masked_cells [s, R, C]`` (every cell of the
    block masked), ``block`` = (fr, fc) full cells per shown cell, ``how`` "max" or "mean",
    ``limit`` the display limit it was made for, ``low``/``high [s]`` the finite min and max
    of the whole stage (±inf when it has no finite cell; for ``masked``, a signed stage whose
    levels depend only on the largest size, the range may include 0),
    ``row_low``/``row_high [s, n]`` each query's min and max over the keys it may see
    (weights only; else None).
    """

    image: np.ndarray
    masked_cells: np.ndarray
    block: tuple[int, int]
    how: str
    limit: int
    low: np.ndarray
    high: np.ndarray
    row_low: np.ndarray | None = None
    row_high: np.ndarray | None = None


def wants_preview(n: int, m: int, limit: int | None) -> bool:
    """True when a pass asked for previews at ``limit`` should make them for an [n, m] stage."""
    return limit is not None and max(n, m) > limit


def aligned_block(rows: int, fr: int) -> int:
    """``rows`` per block rounded down to a multiple of the block height ``fr`` (at least fr)."""
    return max(fr, rows - rows % fr)


class PreviewBuilder:
    """Collects one stage's preview, block of query rows by block of query rows (in any
    order, each row block once per head)."""

    def __init__(
        self, how: str, heads: int, n: int, m: int, limit: int, row_range: bool, levels=True
    ):
        self.how, self.limit, self.n = how, limit, n
        self.block = block_factors(n, m, limit)
        self._images: list[dict[int, np.ndarray]] = [{} for _ in range(heads)]
        self._masked_cells: list[dict[int, np.ndarray]] = [{} for _ in range(heads)]
        self.levels = levels  #: False for stages with fixed levels: no range kept
        self.low = np.full(heads, np.inf)  # [s]
        self.high = np.full(heads, -np.inf)  # [s]
        self.row_low = np.full((heads, n), np.inf) if row_range else None  # [s, n]
        self.row_high = np.full((heads, n), -np.inf) if row_range else None  # [s, n]

    def shrink(self, values: np.ndarray) -> tuple[list, list]:
        """Each head's (image, masked_cells) of ``values [c, rows, m]`` by this stage's rule."""
        fr, fc = self.block
        c, rows = values.shape[0], values.shape[1]
        if rows % fr == 0:  # whole blocks: every head in one pass over [c*rows, m]
            image, masked_cells = reduce_blocks(
                values.reshape(c * rows, -1), fr, fc, self.how, narrow=False
            )
            return list(image.reshape(c, rows // fr, -1)), list(
                masked_cells.reshape(c, rows // fr, -1)
            )
        pairs = [reduce_blocks(values[h], fr, fc, self.how, False) for h in range(c)]  # padded
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def store(self, r0: int, first_head: int, images, masked_lists, low=None, high=None) -> None:
        """Keep the shrunk rows from ``r0`` of heads ``first_head ..`` and their range."""
        for h, (image, masked_cells) in enumerate(zip(images, masked_lists)):
            self._images[first_head + h][r0] = image  # [rows/fr, C]
            self._masked_cells[first_head + h][r0] = masked_cells
        if low is not None:
            heads = slice(first_head, first_head + len(images))
            np.minimum(self.low[heads], low, out=self.low[heads])
            np.maximum(self.high[heads], high, out=self.high[heads])

    def add(
        self, r0: int, values: np.ndarray, allowed: np.ndarray | None = None, first_head: int = 0
    ) -> None:
        """Rows ``r0 .. r0 + rows`` of heads ``first_head ..``: ``values [c, rows, m]`` (may
        hold −∞), ``allowed [rows, m]`` the keys each row may see (for the per-row range).
        ``r0`` is a multiple of the block height."""
        images, masked_lists = self.shrink(values)
        low = high = None
        if self.levels:
            low, high = finite_range(values)
        self.store(r0, first_head, images, masked_lists, low, high)
        if self.row_low is not None:
            self.add_row_range(r0, values, allowed, first_head)

    def add_row_range(self, r0: int, values, allowed, first_head: int) -> None:
        """Each row's min and max over the keys it may see (all keys when ``allowed`` is None)."""
        heads = slice(first_head, first_head + values.shape[0])
        rows_of = slice(r0, r0 + values.shape[1])
        seen = np.ones(values.shape[1:], bool) if allowed is None else allowed  # [rows, m]
        self.row_low[heads, rows_of] = np.min(values, axis=2, where=seen, initial=np.inf)
        self.row_high[heads, rows_of] = np.max(values, axis=2, where=seen, initial=-np.inf)

    def result(self) -> StagePreview:
        """The finished preview (every row added)."""
        image = np.stack([_in_row_order(parts) for parts in self._images])  # [s, R, C]
        masked_cells = np.stack([_in_row_order(parts) for parts in self._masked_cells])  # [s, R, C]
        return StagePreview(
            image=image,
            masked_cells=masked_cells,
            block=self.block,
            how=self.how,
            limit=self.limit,
            low=self.low,
            high=self.high,
            row_low=self.row_low,
            row_high=self.row_high,
        )


def _in_row_order(parts: dict[int, np.ndarray]) -> np.ndarray:
    return np.concatenate([parts[r0] for r0 in sorted(parts)])


def finite_range(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per head, the min and max of the finite cells of ``values [c, rows, m]`` (±inf when
    a head has none)."""
    with np.errstate(invalid="ignore"):
        low, high = values.min(axis=(1, 2)), values.max(axis=(1, 2))  # [c], [c]
        if not (np.isfinite(low).all() and np.isfinite(high).all()):
            finite = np.isfinite(values)  # [c, rows, m]
            low = np.min(values, axis=(1, 2), where=finite, initial=np.inf)
            high = np.max(values, axis=(1, 2), where=finite, initial=-np.inf)
    return low, high


class SquarePreviews:
    """The previews of the kept square stages of one pass, made block by block.

    The same numbers as one :class:`PreviewBuilder` per stage, with the passes over each
    block that the stages' relations make unnecessary left out: ``scaled`` is ``scores``
    times the scale factor (its block means and range are those of ``scores``, scaled),
    ``masked`` is ``scaled`` where the mask allows (its means and range come from the
    allowed cells, counted once per block for every head), the weights' range is fixed
    (0..1) and blocked keys weigh 0, so each row's largest weight needs no mask.
    """

    def __init__(
        self, names, heads: int, n: int, m: int, limit: int, factor: float, allowed=None, cache=None
    ):
        self.factor = float(factor)
        #: a soft cap comes between the scaled and the masked scores (set by the sink)
        self.capped = False
        #: each display block's share of allowed cells ``[R, C]``, made once per mask (per cache)
        share = None if allowed is None else preview_of(allowed, "mean", limit, cache)
        self.share = None if share is None else share.image[0]
        self.builders = {
            name: PreviewBuilder(
                stage(name).shrink,
                heads,
                n,
                m,
                limit,
                row_range=stage(name).scalable,
                levels=stage(name).fixed_levels is None,
            )
            for name in names
        }
        self.block = block_factors(n, m, limit)

    def add(self, r0: int, values: dict, allowed: np.ndarray, first_head: int = 0) -> None:
        """Rows ``r0 ..`` of heads ``first_head ..``: ``values[name] [c, rows, m]`` (numpy),
        ``allowed [rows, m]``."""
        fr, fc = self.block
        done: dict[str, tuple] = {}  # name -> (images, masked_lists, low, high)
        scores = self.builders.get("scores")
        if scores is not None:
            images, masked_lists = scores.shrink(values["scores"])
            done["scores"] = (images, masked_lists, *finite_range(values["scores"]))
        if "scaled" in self.builders:
            if "scores" in done and self.factor > 0:
                images, masked_lists, low, high = done["scores"]
                done["scaled"] = (
                    [i * self.factor for i in images],
                    masked_lists,
                    low * self.factor,
                    high * self.factor,
                )
            else:
                images, masked_lists = self.builders["scaled"].shrink(values["scaled"])
                done["scaled"] = (images, masked_lists, *finite_range(values["scaled"]))
        if values.get("capped") is not None and "capped" in self.builders:  # a soft cap
            images, masked_lists = self.builders["capped"].shrink(values["capped"])
            done["capped"] = (images, masked_lists, *finite_range(values["capped"]))
        # the masked scores are the stage before the mask (capped, else scaled) where allowed
        before = "capped" if self.capped else "scaled"
        whole = allowed.shape[0] % fr == 0 and allowed.shape[1] % fc == 0  # [rows, m]
        if "masked" in self.builders and whole and values.get(before) is not None:
            images = done[before][0] if before in done else None
            done["masked"] = self._masked(r0, values[before], allowed, images)
        for name, builder in self.builders.items():
            if name in done:
                builder.store(r0, first_head, *done[name])
            elif name == "weights":
                images, masked_lists = builder.shrink(values[name])
                builder.store(r0, first_head, images, masked_lists)
                rows_of = slice(r0, r0 + values[name].shape[1])
                heads = slice(first_head, first_head + values[name].shape[0])
                low = np.min(values[name], axis=2, where=allowed, initial=np.inf)  # [c, rows]
                builder.row_low[heads, rows_of] = low
                builder.row_high[heads, rows_of] = values[name].max(axis=2)  # blocked keys weigh 0
            else:
                builder.add(r0, values[name], allowed, first_head)

    def _masked(self, r0: int, scaled: np.ndarray, allowed: np.ndarray, scaled_images) -> tuple:
        """(images, masked_lists, low, high) of ``masked`` from ``scaled [c, rows, m]``: block
        means over the allowed cells only, blocks with none masked. A block whose keys are all
        visible is the scaled block itself (``scaled_images``, when given): only the columns
        holding partly masked blocks (the diagonal of a causal mask) are averaged here."""
        fr, fc = self.block
        c, rows, m = scaled.shape
        cached = self.share is not None and scaled.dtype == np.float32
        if cached:
            share = self.share[r0 // fr : r0 // fr + rows // fr]  # [rows/fr, C], of the mask
        else:  # float64 passes count in float64 (a share like 4/9 is not exact in float32)
            share, _ = reduce_blocks(allowed.astype(float), fr, fc, "mean", narrow=False)
        zeroed = scaled * allowed  # [c, rows, m], masked cells 0 (a product: no slow where)
        masked_cells = share == 0  # [rows/fr, C]
        if cached and scaled_images is not None:
            whole = share == 1  # [rows/fr, C]
            image = np.where(whole, np.stack(scaled_images), 0.0)  # [c, rows/fr, C]
            partly = ~(whole | masked_cells)
            columns = np.flatnonzero(partly.any(axis=0))
            lo, hi = (int(columns[0]), int(columns[-1]) + 1) if columns.size else (0, 0)
            width = slice(lo * fc, hi * fc)
            cells = slice(lo, hi)
        else:
            image = np.zeros((c, rows // fr, share.shape[1]))
            partly, width, cells = ~masked_cells, slice(None), slice(None)
        if partly[:, cells].size:
            part = np.ascontiguousarray(zeroed[:, :, width]).reshape(c * rows, -1)
            means, _ = reduce_blocks(part, fr, fc, "mean", narrow=False)
            means = means.reshape(c, rows // fr, -1)  # [c, rows/fr, columns]
            taken = partly[:, cells]
            with np.errstate(invalid="ignore", divide="ignore"):
                averaged = means / np.where(taken, share[:, cells], 1.0)
            image[:, :, cells] = np.where(taken, averaged, image[:, :, cells])
        if stage("masked").kind == "signed":  # levels from the largest size: 0 changes none
            low, high = zeroed.min(axis=(1, 2)), zeroed.max(axis=(1, 2))  # [c]
        else:
            low = np.min(scaled, axis=(1, 2), where=allowed, initial=np.inf)  # [c]
            high = np.max(scaled, axis=(1, 2), where=allowed, initial=-np.inf)
        image = image.astype(scaled.dtype, copy=False)
        return list(image), [masked_cells] * c, low, high

    def results(self) -> dict[str, StagePreview]:
        """Every stage's finished preview."""
        return {name: builder.result() for name, builder in self.builders.items()}


def preview_of(
    values: np.ndarray, how: str, limit: int = PREVIEW_LIMIT, cache: EngineCache | None = None
) -> StagePreview:
    """The preview of one whole 2-D stage ``values [n, m]`` (e.g. the mask), shrunk a block
    of rows at a time so no full-size temporary is made. With a ``cache``, the same read-only
    array asked again (the mask, unchanged by an edit) gets the same preview back."""
    if cache is None or not isinstance(values, np.ndarray):
        return _preview_of(np.asarray(values), how, limit)
    return cache.preview(values, how, limit, lambda: _preview_of(values, how, limit))


def _preview_of(values: np.ndarray, how: str, limit: int) -> StagePreview:
    n, m = values.shape
    builder = PreviewBuilder(how, 1, n, m, limit, row_range=False)
    step = aligned_block(max(1, (1 << 20) // max(1, m)), builder.block[0])
    for r0 in range(0, n, step):
        part = values[r0 : r0 + step]  # [rows, m]
        builder.add(r0, (part.astype(np.float32) if part.dtype == bool else part)[None])
    return builder.result()
