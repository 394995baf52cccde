"""compute(): the whole attention pipeline, strung together from the primitives of
:mod:`attention_explorer.kernels` (the backend's namespace, ``lib.ops``).

    X_pos   = X + P (with positional encoding on)     [n, d_model]
    Q, K, V = project, split heads                    [s, n|m, d]
    Q_normed, K_normed = QK-norm (RMSNorm per head)   [s, n|m, d_k]
    Q_rot, K_rot = rotate q and k by position (RoPE)  [s, n|m, d_k]
    scaled  = score, scale                            [s, n, m]
    capped  = cap · tanh(scaled / cap) (soft cap)     [s, n, m]
    masked  = mask                                    [s, n, m]
    weights = normalise                               [s, n, m]
    head    = combine                                 [s, n, d_v]
    concat, output                                    [n, h*d_v], [n, d_out]

The same lines run on numpy and on torch (cpu, cuda, mps) through array_api_compat. A float32
overflow anywhere raises :class:`ComputeOverflow`; :func:`compute` redoes the pass in float64.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

import numpy as np

from attention_explorer.core.stages import stage
from attention_explorer.engine.backend import ArrayLib, Backend, extremes_for
from attention_explorer.engine.block_runner import BlockRunner, full_trace_rows, usable_cores
from attention_explorer.engine.budget import check_budget
from attention_explorer.engine.cache import EngineCache
from attention_explorer.engine.config import AttentionConfig
from attention_explorer.engine.engine_errors import (
    AttentionInputError,
    ComputeOverflow,
    require_finite,
)
from attention_explorer.engine.head_inputs import projected_heads, rotated_heads, typed_heads
from attention_explorer.engine.inputs import AttentionInputs, resolve_config, validate_inputs
from attention_explorer.engine.mask import allowed_mask
from attention_explorer.engine.preview import StagePreview, preview_of, wants_preview
from attention_explorer.engine.row_blocks import CHUNK_ELEMENTS, attend_rows, row_block
from attention_explorer.engine.sinks import FullSink, PreviewSink
from attention_explorer.engine.trace import ALL_STAGES, PER_HEAD_STAGES, SQUARE_STAGES, Trace
from attention_explorer.engine.variants.qk_norm import normed_heads


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
    cache: EngineCache | None = None,
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

    Without ``cache`` the call is pure: it reads its arguments and returns new arrays only.
    A caller that computes again and again passes its own :class:`~.cache.EngineCache`, and
    its passes reuse the mask, its previews and the memory of large stages (never share one
    cache between passes that may run at the same time).

    If float32 overflows anywhere (projections, scores, head outputs or the output, for inputs
    near 1e30), the pass is redone in float64 and a note says so; the result is always finite.
    """
    backend = backend or Backend()
    config = resolve_config(config, inputs)
    n, m = validate_inputs(config, inputs, extremes_for(backend))
    plan = _plan(config, _stage_set(stages), _head_list(heads, config.heads), n, m, preview)
    # before allocating anything
    check_budget(config, n, m, heads_kept=len(plan.selected), dtype=dtype, preview=plan.preview)
    started = time.perf_counter()
    lib = ArrayLib(backend, dtype)
    notes: tuple[str, ...] = ()
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected, then redone
        try:
            kept, previews, fully_masked = _run(inputs, config, lib, n, m, plan, cache)
        except ComputeOverflow:
            notes = (
                f"values overflowed {dtype}; this pass was computed in float64 to stay finite",
            )
            try:
                kept, previews, fully_masked = _run(
                    inputs, config, ArrayLib(backend, "float64"), n, m, plan, cache
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
    keep = keep - {name for name in keep if not _has_rule(config, stage(name).when)}
    need_all = bool({"concat", "output"} & keep)
    need_head_outputs = need_all or "head_outputs" in keep
    # QK-norm over every head's width needs every head's q and k
    every = need_all or (config.qk_normed and config.qk_norm_width == "all")
    run_heads = tuple(range(config.heads)) if every else selected
    if run_heads == selected and keep & set(SQUARE_STAGES):
        # Every head's [n, m] stages are kept anyway: chunking would save little memory and
        # cost a concatenating copy of each kept stage.
        per_chunk = len(run_heads)
    else:
        per_chunk = max(1, CHUNK_ELEMENTS // max(1, n * m))
    need_v = need_head_outputs or "V" in keep
    preview = preview if wants_preview(n, m, preview) else None
    return _Plan(keep, selected, run_heads, need_all, need_head_outputs, need_v, per_chunk, preview)


#: The stage rules (core/stage_rules.py) a config can turn off, with the test that keeps
#: them: only RoPE has rotated q and k, only QK-norm normed ones, only a cap capped scores.
_CONFIG_RULES = MappingProxyType(
    {
        "rotary": lambda config: config.rotary,
        "qk_norm": lambda config: config.qk_normed,
        "softcap": lambda config: config.softcap is not None,
        "sinks": lambda config: config.attention_sinks,
    }
)


def _has_rule(config: AttentionConfig, rule: str) -> bool:
    """False when ``config`` computes no stage shown by rule ``rule``."""
    test = _CONFIG_RULES.get(rule)
    return test is None or bool(test(config))


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


def _run(inputs, config, lib: ArrayLib, n: int, m: int, plan: _Plan, cache):
    """One pass in ``lib``'s dtype: (stages as numpy arrays, previews, fully masked rows)."""
    kept: dict[str, np.ndarray | None] = dict.fromkeys(ALL_STAGES)
    previews: dict[str, StagePreview] = {}
    if config.mode == "direct":
        Q, K, V = typed_heads(lib, config, inputs, plan)
    else:
        Q, K, V = projected_heads(lib, config, inputs, n, m, plan, kept)
    require_finite(lib.ops, "the projections Q, K, V", *(a for a in (Q, K, V) if a is not None))
    earlier = {}  # the q and k stages before the ones the scores read, by stage name
    if config.qk_normed:  # QK-norm, then RoPE reads the normed q and k
        earlier.update(Q=Q, K=K)
        Q, K = normed_heads(lib, config, inputs, Q, K, plan.run_heads)  # [s, n|m, d_k]
        require_finite(lib.ops, "the QK-normed q and k", Q, K)
    if config.rotary:  # the attention core reads the rotated q and k from here on
        if config.qk_normed:
            earlier.update(Q_normed=Q, K_normed=K)
        else:
            earlier.update(Q=Q, K=K)
        Q, K = rotated_heads(lib, config, Q, K)  # [s, n, d_k], [s, m, d_k]
        last = ("Q_rot", "K_rot")
    else:
        last = ("Q_normed", "K_normed") if config.qk_normed else ("Q", "K")
    allowed = allowed_mask(config, n, m, cache)  # [n, m] bool
    fully_masked = tuple(int(i) for i in np.flatnonzero(~allowed.any(axis=1)))
    if "mask" in plan.keep:
        kept["mask"] = allowed
        if plan.preview is not None:
            previews["mask"] = preview_of(allowed, stage("mask").shrink, plan.preview, cache)
    if plan.preview is not None and cache is not None:
        cache.pool.clear()  # a previewed pass keeps no [n, m] stage: unused pooled blocks go back
    sinks = None  # the run heads' sink logits [s] (attention sinks on)
    if config.attention_sinks:
        sinks = lib.asarray(np.asarray(inputs.sinks, dtype=np.float64)[list(plan.run_heads)])
    sink, head_outputs = _attend(
        lib, config, (Q, K, V, (earlier, last)), allowed, bool(fully_masked), plan, cache, sinks
    )
    sink.finish(kept, previews)
    del sink
    if plan.need_all:
        _concat_and_output(lib, config, inputs, head_outputs, plan, kept)
    return kept, previews, fully_masked


def _attend(
    lib: ArrayLib, config, qkv, allowed_np, any_fully_masked, plan: _Plan, cache, sinks=None
):
    """Score, scale, mask, normalise and combine, a chunk of heads at a time.

    Each chunk goes through its query rows a block at a time (:func:`row_block`): every step
    is per query row, so the result is the same, but each block's scores, weights and
    temporaries stay in the processor's cache and no [c, n, m] temporary is ever made (only
    the kept stages, or their previews). Each block goes to a sink (:mod:`.sinks`): the full
    stages, or their previews when the plan previews. Returns the sink (its ``finish`` puts
    the kept stages in place) and the head outputs per chunk (``[c, n, d_v]`` each, empty
    when not needed). ``qkv`` is (Q, K, V, (earlier, last)): Q and K are what the scores read
    (rotated under RoPE, normed under QK-norm), ``last`` their stage names ("Q_rot",
    "K_rot"; "Q", "K" without either) and ``earlier`` the q and k stages before them, by name
    (the Q and K as projected, and the normed ones under RoPE and QK-norm together).
    ``sinks [s]``: the run heads' sink logits (attention sinks), each chunk's blocks give
    their ``sink_weight`` rows, joined into the chunk's ``[c, n, 1]``.
    """
    Q, K, V, (earlier, last) = qkv
    n, m = allowed_np.shape
    allowed = lib.asbool(allowed_np)  # [n, m]
    factor = config.scale_value() / config.temperature
    check_each = not scores_cannot_overflow(lib, Q, K, factor, n, m)
    square = [name for name in SQUARE_STAGES if name in plan.keep]
    others = [name for name in PER_HEAD_STAGES if name in plan.keep and name not in square]
    if plan.preview is not None and square:
        rules = (factor, any_fully_masked, plan.preview)
        sink = PreviewSink(
            lib, config, plan.selected, square, others, allowed_np, allowed, rules, cache
        )
    else:
        sink = FullSink(lib, plan.selected, square, others, n, m, cache)

    sink_rows: dict[int, object] = {}  # block start -> its sink weights [c, rows, 1]

    def rows(q, k, v, s, r: slice, buffers) -> dict:  # one block: [c, rows, ·] stages
        picked = (allowed[r], factor, check_each, any_fully_masked, square)
        values = attend_rows(
            lib, config, q[:, r], k, v, *picked, plan.need_head_outputs, buffers, sinks=s
        )
        if s is not None:
            sink_rows[r.start] = values["sink_weight"]  # blocks never share a start
        return values

    # a full trace spreads its row blocks over every core (a small one is one block); a
    # previewed one (the window's worker, beside the GUI thread) stays on one thread (see
    # :mod:`.block_runner`)
    threads = 1 if plan.preview is not None else usable_cores()
    runner = BlockRunner(lib, m, threads)
    head_outputs = []
    for start in range(0, len(plan.run_heads), plan.per_chunk):
        chunk = slice(start, start + plan.per_chunk)
        chunk_heads = plan.run_heads[chunk]
        q, k = Q[chunk], K[chunk]  # [c, n, d_k], [c, m, d_k]
        v = V[chunk] if V is not None else None  # [c, m, d_v]
        c = len(chunk_heads)
        if plan.preview is not None:
            per_block = row_block(c, n, m)
        else:  # the chunk's stages are kept, or temporaries
            kept = all(head in plan.selected for head in chunk_heads)
            per_block = full_trace_rows(lib, c, n, m, threads, kept)
        block = sink.start_chunk(chunk_heads, per_block)
        s = None if sinks is None else sinks[chunk]  # [c]
        sink_rows.clear()
        outs = runner.run(partial(rows, q, k, v, s), sink, len(chunk_heads), n, block)
        head_out = _joined_rows(lib, outs)  # [c, n, d_v] or None
        if head_out is not None:
            require_finite(lib.ops, "the head outputs", head_out)
        if plan.need_head_outputs:
            head_outputs.append(head_out)
        values = {name: array[chunk] for name, array in earlier.items()}  # [c, n|m, d_k] each
        values.update({last[0]: q, last[1]: k, "V": v, "head_outputs": head_out})
        values.update(scores_q=q, scores_k=k)  # what the scores read, whatever its name
        if s is not None:
            blocks = [sink_rows[start] for start in sorted(sink_rows)]  # [c, rows, 1] each
            values.update(sink_logits=s, sink_weight=_joined_rows(lib, blocks))  # [c, n, 1]
        sink.end_chunk(values)
        del outs, head_out
    return sink, head_outputs


def scores_cannot_overflow(lib: ArrayLib, Q, K, factor: float, n: int, m: int) -> bool:
    """True when no score, scaled score or normaliser sum can overflow the dtype.

    |q . k| <= d_k max|q| max|k|, and the normalisers add at most max(n, m) such values; while
    that stays below a quarter of the dtype's largest number, the [n, m] finiteness check
    (a full extra pass over every score) is not needed.
    """
    xp = lib.xp
    limit = float(xp.finfo(lib.dtype).max) / (4 * max(n, m, 1))
    bound = Q.shape[-1] * float(xp.max(xp.abs(Q))) * float(xp.max(xp.abs(K))) * max(1.0, factor)
    return bound <= limit  # False for inf and nan too


def _joined_rows(lib: ArrayLib, outs: list):
    """The blocks' head outputs ``[c, rows, d_v]`` joined along the rows (None without)."""
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else lib.xp.concat(outs, axis=1)  # [c, n, d_v]


def _concat_and_output(lib: ArrayLib, config, inputs, head_outputs, plan: _Plan, kept) -> None:
    """Concatenate every head's output and apply W_O, keeping what was asked for."""
    heads_all = head_outputs[0] if len(head_outputs) == 1 else lib.xp.concat(head_outputs, axis=0)
    joined = lib.ops.merge_heads(heads_all)  # [n, h*d_v]
    if "concat" in plan.keep:
        kept["concat"] = lib.to_numpy(joined)
    if "output" in plan.keep and inputs.W_O is not None and config.use_output_projection:
        b_O = None if inputs.b_O is None else lib.asarray(inputs.b_O)
        out = lib.ops.linear(joined, lib.asarray(inputs.W_O), b_O)  # [n, d_out]
        require_finite(lib.ops, "the output", out)
        kept["output"] = lib.to_numpy(out)
