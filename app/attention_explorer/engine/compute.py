"""compute(): the whole attention pipeline, strung together from the steps in ``steps.py``.

    X_pos   = X + P (with positional encoding on)     [n, d_model]
    Q, K, V = project, split heads                    [s, n|m, d]
    scaled  = score, scale                            [s, n, m]
    masked  = mask                                    [s, n, m]
    weights = normalise                               [s, n, m]
    head    = combine                                 [s, n, d_v]
    concat, output                                    [n, h*d_v], [n, d_out]

The same lines run on numpy and on torch (cpu, cuda, mps) through array_api_compat. A float32
overflow anywhere raises :class:`ComputeOverflow`; :func:`compute` redoes the pass in float64.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine import steps
from attention_explorer.engine.backend import ArrayLib, Backend
from attention_explorer.engine.blas_threads import one_blas_thread
from attention_explorer.engine.budget import CHUNK_ELEMENTS, check_budget
from attention_explorer.engine.config import AttentionConfig
from attention_explorer.engine.errors import AttentionInputError, ComputeOverflow
from attention_explorer.engine.head_inputs import projected_heads, typed_heads
from attention_explorer.engine.inputs import AttentionInputs, resolve_config, validate_inputs
from attention_explorer.engine.mask import allowed_mask
from attention_explorer.engine.preview import (
    SquarePreviews,
    StagePreview,
    aligned_block,
    preview_of,
    wants_preview,
)
from attention_explorer.engine.recompute import RecomputedStage, RowSource
from attention_explorer.engine.row_blocks import RowBuffers, attend_rows, row_block
from attention_explorer.engine.stage_pool import clear_pool, pooled_empty
from attention_explorer.engine.trace import ALL_STAGES, PER_HEAD_STAGES, SQUARE_STAGES, Trace
from attention_explorer.stages import stage


def compute(
    inputs: AttentionInputs,
    config: AttentionConfig,
    backend: Backend | None = None,
    dtype: str = "float32",
    heads: Iterable[int] | None = None,
    stages: Iterable[str] | None = None,
    tokens: Sequence[str] | None = None,
    kv_tokens: Sequence[str] | None = None,
    preview: int | None = None,
) -> Trace:
    """Run attention and return a :class:`Trace` of every stage, as numpy arrays.

    ``heads`` limits the per-head stages kept to those query heads (default: all);
    ``stages`` limits which stages are kept (default: all). With both limited (say head 0,
    weights only) long sequences stay cheap: only the heads needed are projected and the
    [n, m] intermediates of other heads are never made. ``concat`` and ``output`` need every
    head and compute them all, keeping only the asked-for per-head stages. ``preview`` (a
    display limit, e.g. 512) makes a sequence longer than that keep its square stages and the
    mask at display resolution (``trace.previews``) instead of [n, m] arrays; their rows are
    then recomputed when read (:mod:`.preview`, :mod:`.recompute`).

    If float32 overflows anywhere (projections, scores, head outputs or the output, for inputs
    near 1e30), the pass is redone in float64 and a note says so; the result is always finite.
    """
    backend = backend or Backend()
    config = resolve_config(config, inputs)
    n, m = validate_inputs(config, inputs)
    plan = _plan(config, _stage_set(stages), _head_list(heads, config.heads), n, m, preview)
    # before allocating anything
    check_budget(config, n, m, heads_kept=len(plan.selected), dtype=dtype, preview=plan.preview)
    started = time.perf_counter()
    lib = ArrayLib(backend, dtype)
    notes: tuple[str, ...] = ()
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected, then redone
        try:
            kept, previews, fully_masked = _run(inputs, config, lib, n, m, plan)
        except ComputeOverflow:
            notes = (
                f"values overflowed {dtype}; this pass was computed in float64 to stay finite",
            )
            try:
                kept, previews, fully_masked = _run(
                    inputs, config, ArrayLib(backend, "float64"), n, m, plan
                )
            except ComputeOverflow as exc:  # pragma: no cover - inputs are capped at 1e30
                raise AttentionInputError(
                    "inputs", f"values are too large even for float64 ({exc})"
                ) from None
    return Trace(
        config=config,
        inputs=inputs,
        backend=backend,
        dtype="float64" if notes else dtype,
        heads=plan.selected,
        tokens=_labels(tokens, n),
        kv_tokens=_labels(kv_tokens if config.attention == "cross" else tokens, m),
        stages=kept,
        previews=previews,
        fully_masked_rows=fully_masked,
        notes=notes,
        scale=config.scale_value(),
        seconds=time.perf_counter() - started,
    )


@dataclass(frozen=True)
class _Plan:
    """What one pass computes and keeps."""

    keep: frozenset[str]  #: stage names to keep
    selected: tuple[int, ...]  #: query heads whose per-head stages are kept
    run_heads: tuple[int, ...]  #: query heads computed (all of them for concat/output)
    need_all: bool  #: concat or output asked for
    need_head_outputs: bool  #: weights V is needed
    need_v: bool  #: V is projected
    per_chunk: int  #: heads per chunk of the [c, n, m] work
    preview: int | None  #: display limit of the previews made instead of [n, m] stages


def _plan(config: AttentionConfig, keep: frozenset[str], selected, n, m, preview) -> _Plan:
    need_all = bool({"concat", "output"} & keep)
    need_head_outputs = need_all or "head_outputs" in keep
    run_heads = tuple(range(config.heads)) if need_all else selected
    if run_heads == selected and keep & set(SQUARE_STAGES):
        # Every head's [n, m] stages are kept anyway: chunking would save little memory and
        # cost a concatenating copy of each kept stage.
        per_chunk = len(run_heads)
    else:
        per_chunk = max(1, CHUNK_ELEMENTS // max(1, n * m))
    need_v = need_head_outputs or "V" in keep
    preview = preview if wants_preview(n, m, preview) else None
    return _Plan(keep, selected, run_heads, need_all, need_head_outputs, need_v, per_chunk, preview)


def _labels(given: Sequence[str] | None, count: int) -> tuple[str, ...]:
    if given is not None and len(given) == count:
        return tuple(str(t) for t in given)
    return tuple(f"t{i}" for i in range(count))


def _stage_set(stages: Iterable[str] | None) -> frozenset[str]:
    if stages is None:
        return frozenset(ALL_STAGES)
    wanted = frozenset(stages)
    unknown = sorted(wanted - set(ALL_STAGES))
    if unknown:
        raise AttentionInputError(
            "stages", f"unknown stage {unknown[0]!r}; choose from {', '.join(ALL_STAGES)}"
        )
    return wanted


def _head_list(heads: Iterable[int] | None, count: int) -> tuple[int, ...]:
    if heads is None:
        return tuple(range(count))
    chosen = tuple(sorted(set(int(h) for h in heads)))
    bad = [h for h in chosen if not 0 <= h < count]
    if bad or not chosen:
        raise AttentionInputError(
            "heads", f"head {bad[0] if bad else '(none)'} is not 0..{count - 1}"
        )
    return chosen


def _run(inputs, config, lib: ArrayLib, n: int, m: int, plan: _Plan):
    """One pass in ``lib``'s dtype: (stages as numpy arrays, previews, fully masked rows)."""
    kept: dict[str, np.ndarray | None] = dict.fromkeys(ALL_STAGES)
    previews: dict[str, StagePreview] = {}
    if config.mode == "direct":
        Q, K, V = typed_heads(lib, config, inputs, plan)
    else:
        Q, K, V = projected_heads(lib, config, inputs, n, m, plan, kept)
    steps.require_finite(
        lib.xp, "the projections Q, K, V", *(a for a in (Q, K, V) if a is not None)
    )
    allowed = allowed_mask(config, n, m)  # [n, m] bool
    fully_masked = tuple(int(i) for i in np.flatnonzero(~allowed.any(axis=1)))
    if "mask" in plan.keep:
        kept["mask"] = allowed
        if plan.preview is not None:
            previews["mask"] = preview_of(allowed, stage("mask").shrink, plan.preview)
    head_outputs = _attend(lib, config, Q, K, V, allowed, bool(fully_masked), plan, kept, previews)
    if plan.need_all:
        _concat_and_output(lib, config, inputs, head_outputs, plan, kept)
    return kept, previews, fully_masked


def _attend(
    lib: ArrayLib, config, Q, K, V, allowed_np, fully_masked_rows, plan: _Plan, kept, previews
):
    """Score, scale, mask, normalise and combine, a chunk of heads at a time.

    Stores the kept per-head stages in ``kept`` (and, when the plan previews, the square
    stages' previews in ``previews`` with recomputing stand-ins in ``kept``); returns the head
    outputs per chunk (``[c, n, d_v]`` each, empty when not needed). Long sequences go through
    each chunk of heads a block of query rows at a time (:func:`row_block`): every step is per
    query row, so the result is the same, but each block's scores, weights and temporaries
    stay in the processor's cache and no [c, n, m] temporary is ever made (only the kept
    stages, or their previews).
    """
    xp = lib.xp
    n, m = allowed_np.shape
    allowed = lib.asbool(allowed_np)  # [n, m]
    if plan.preview is not None:
        clear_pool()  # a previewed pass keeps no [n, m] stage: unused pooled blocks go back
    factor = config.scale_value() / config.temperature
    check_each = not steps.scores_cannot_overflow(lib, Q, K, factor, n, m)
    parts: dict[str, list] = {name: [] for name in PER_HEAD_STAGES if name in plan.keep}
    square = [name for name in SQUARE_STAGES if name in parts]
    previewer = _previewer(plan, square, allowed_np, factor)
    kept_q, kept_k = [], []  # the selected heads' q and k, for recomputing previewed rows
    head_outputs = []
    buffers = None
    done = 0  # selected heads finished in earlier chunks
    for start in range(0, len(plan.run_heads), plan.per_chunk):
        chunk = slice(start, start + plan.per_chunk)
        chunk_heads = plan.run_heads[chunk]
        q, k = Q[chunk], K[chunk]  # [c, n, d_k], [c, m, d_k]
        v = V[chunk] if V is not None else None  # [c, m, d_v]
        block = row_block(len(chunk_heads), n, m)
        if previewer:  # blocks start where display blocks start: previews are exact shrinks
            block = min(n, aligned_block(block, previewer.block[0]))
        if block < n and buffers is None and lib.backend.name == "numpy":
            buffers = RowBuffers(lib.dtype, len(chunk_heads), block, m)
        rows = [i for i, head in enumerate(chunk_heads) if head in plan.selected]
        full: dict[str, np.ndarray] = {}  # the kept [s, n, m] stages, filled block by block

        outs = []
        scratch = buffers if block < n else None
        # many small products: BLAS threads would only wait for each other (and row blocks on
        # two Python threads measured slower: 72 vs 61 ms at n = 4096 on 2 cores)
        with one_blas_thread() if block < n else contextlib.nullcontext():
            for r0 in range(0, n, block):
                r = slice(r0, min(n, r0 + block))
                values = attend_rows(
                    lib,
                    config,
                    q[:, r],
                    k,
                    v,
                    allowed[r],
                    factor,
                    check_each,
                    bool(fully_masked_rows),
                    square,
                    plan.need_head_outputs,
                    scratch,
                )
                if previewer:  # a chunk without a selected head gives only head outputs
                    if rows:
                        pick = slice(None) if len(rows) == len(chunk_heads) else rows
                        parts_np = {
                            name: lib.to_numpy(values[name])[pick]  # [c', rows, m]
                            for name in square
                            if values[name] is not None
                        }
                        previewer.add(r0, parts_np, allowed_np[r], first_head=done)
                elif block >= n:  # one block: keep the arrays themselves, no copy
                    full = {name: values[name] for name in square}
                else:
                    for name in square:
                        part = lib.to_numpy(values[name])  # [c, rows, m]
                        part = part if len(rows) == len(chunk_heads) else part[rows]
                        if name not in full:
                            full[name] = pooled_empty((len(rows), n, m), part.dtype)
                        full[name][:, r] = part
                if values["head_outputs"] is not None:
                    outs.append(values["head_outputs"])  # [c, rows, d_v]
                del values
        head_out = None
        if plan.need_head_outputs:
            head_out = outs[0] if len(outs) == 1 else xp.concat(outs, axis=1)  # [c, n, d_v]
            head_outputs.append(head_out)
        chunk_values = {"Q": q, "K": k, "V": v, "head_outputs": head_out}
        if block >= n and not previewer:
            chunk_values.update(full)
            _keep_heads(parts, chunk_values, chunk_heads, plan.selected)
        else:
            _keep_heads(
                {k_: p for k_, p in parts.items() if k_ not in square},
                chunk_values,
                chunk_heads,
                plan.selected,
            )
            if rows and not previewer:
                for name in square:
                    parts[name].append(full[name])
        if previewer and rows:
            pick = slice(None) if len(rows) == len(chunk_heads) else rows
            kept_q.append(q[pick])  # [c', n, d_k]
            kept_k.append(k[pick])  # [c', m, d_k]
        done += len(rows)
        del full, outs, head_out, chunk_values
    if previewer:
        source = RowSource(
            lib,
            config,
            kept_q[0] if len(kept_q) == 1 else xp.concat(kept_q, axis=0),  # [s, n, d_k]
            kept_k[0] if len(kept_k) == 1 else xp.concat(kept_k, axis=0),  # [s, m, d_k]
            allowed,
            factor,
            bool(fully_masked_rows),
        )
        for name, preview in previewer.results().items():
            previews[name] = preview
            kept[name] = RecomputedStage(source, name)
            parts.pop(name, None)
    for name in list(parts):
        chunks = parts.pop(name)  # dropped as soon as joined, so no stage is held twice for long
        if len(chunks) == 1 or not isinstance(chunks[0], np.ndarray):
            joined = chunks[0] if len(chunks) == 1 else xp.concat(chunks, axis=0)
        else:
            joined = np.concatenate(chunks, axis=0)
        kept[name] = lib.to_numpy(joined)
        del chunks
    return head_outputs


def _previewer(plan: _Plan, square: list[str], allowed, factor: float):
    """The previews of the kept square stages when the plan previews (else None)."""
    if plan.preview is None or not square:
        return None
    n, m = allowed.shape
    return SquarePreviews(square, len(plan.selected), n, m, plan.preview, factor, allowed)


def _keep_heads(parts: dict[str, list], values: dict, chunk_heads, selected) -> None:
    """Append the selected heads' rows of each kept stage of one chunk to ``parts``."""
    rows = [i for i, head in enumerate(chunk_heads) if head in selected]
    if not rows:
        return
    for name, chunk in parts.items():
        value = values[name]
        chunk.append(value if len(rows) == len(chunk_heads) else value[rows])


def _concat_and_output(lib: ArrayLib, config, inputs, head_outputs, plan: _Plan, kept) -> None:
    """Concatenate every head's output and apply W_O, keeping what was asked for."""
    joined = steps.concat(lib.xp, head_outputs)  # [n, h*d_v]
    if "concat" in plan.keep:
        kept["concat"] = lib.to_numpy(joined)
    if "output" in plan.keep and inputs.W_O is not None and config.use_output_projection:
        out = steps.output(lib, joined, inputs.W_O, inputs.b_O)  # [n, d_out]
        steps.require_finite(lib.xp, "the output", out)
        kept["output"] = lib.to_numpy(out)
