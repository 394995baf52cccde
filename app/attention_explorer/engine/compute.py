"""compute(): the whole attention pipeline, written once against the Python array API.

    scores  = Q K^T                                  [s, n, m]
    scaled  = scores * scale / temperature           [s, n, m]
    masked  = scaled where the mask allows, else -inf
    weights = normalizer(masked) over keys           softmax | sparsemax | sigmoid
    head    = weights V                              [s, n, d_v]
    concat  = [head_0 | head_1 | ... ]               [n, h*d_v]
    output  = concat W_O (+ b_O)                     [n, d_out]

The same lines run on numpy and on torch (cpu, cuda, mps) through array_api_compat.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import numpy as np

from attention_explorer.engine.backend import ArrayLib, Backend
from attention_explorer.engine.config import AttentionConfig
from attention_explorer.engine.errors import AttentionInputError
from attention_explorer.engine.inputs import AttentionInputs, resolve_config, validate_inputs
from attention_explorer.engine.mask import allowed_mask
from attention_explorer.engine.normalizers import normalize
from attention_explorer.engine.positional import positional_table
from attention_explorer.engine.trace import ALL_STAGES, PER_HEAD_STAGES, SQUARE_STAGES, Trace

#: Per chunk of heads, at most this many score elements are alive at once (~64 MiB float32).
CHUNK_ELEMENTS = 16 * 1024 * 1024


def compute(
    inputs: AttentionInputs,
    config: AttentionConfig,
    backend: Backend | None = None,
    dtype: str = "float32",
    heads: Iterable[int] | None = None,
    stages: Iterable[str] | None = None,
    tokens: Sequence[str] | None = None,
    kv_tokens: Sequence[str] | None = None,
) -> Trace:
    """Run attention and return a :class:`Trace` of every stage, as numpy arrays.

    ``heads`` limits the per-head stages kept to those query heads (default: all);
    ``stages`` limits which stages are kept (default: all). With both limited (say head 0,
    weights only) long sequences stay cheap: only the heads needed are projected and the
    [n, m] intermediates of other heads are never made. ``concat`` and ``output`` need every
    head and compute them all, keeping only the asked-for per-head stages.

    If float32 overflows anywhere (projections, scores, head outputs or the output, for inputs
    near 1e30), the pass is redone in float64 and a note says so; the result is always finite.
    """
    backend = backend or Backend()
    config = resolve_config(config, inputs)
    n, m = validate_inputs(config, inputs)
    keep = _stage_set(stages)
    selected = _head_list(heads, config.heads)
    started = time.perf_counter()
    lib = ArrayLib(backend, dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and redone below
        trace = _run(inputs, config, lib, n, m, selected, keep)
    if trace.notes == ("overflow",):
        trace = _run(inputs, config, ArrayLib(backend, "float64"), n, m, selected, keep)
        if trace.notes == ("overflow",):  # pragma: no cover - inputs are capped at 1e30
            raise AttentionInputError("inputs", "values are too large to multiply even in float64")
        trace.notes = (
            f"values overflowed {dtype}; this pass was computed in float64 to stay finite",
        )
    trace.seconds = time.perf_counter() - started
    trace.tokens = _labels(tokens, n, "t")
    trace.kv_tokens = _labels(kv_tokens if config.attention == "cross" else tokens, m, "t")
    trace.dtype = dtype if not trace.notes else "float64"
    return trace


def _labels(given: Sequence[str] | None, count: int, prefix: str) -> tuple[str, ...]:
    if given is not None and len(given) == count:
        return tuple(str(t) for t in given)
    return tuple(f"{prefix}{i}" for i in range(count))


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


def _project(
    lib: ArrayLib,
    config: AttentionConfig,
    inputs: AttentionInputs,
    n: int,
    m: int,
    heads,
    need_v: bool = True,
):
    """Q, K, V ``[s, n|m, d]`` for the query heads in ``heads``, and X, X_kv as used.

    V is None when ``need_v`` is False (weights only: no values needed).
    """
    xp = lib.xp
    h, dk, dv = config.heads, config.head_dim, config.value_dim
    group = config.heads // config.n_kv_heads
    kv_of = [q // group for q in heads]  # key/value head serving each query head
    if config.mode == "direct":
        Q = lib.asarray(inputs.Q[list(heads)])  # [s, n, d_k]
        K = lib.asarray(inputs.K[kv_of])  # [s, m, d_k]
        V = lib.asarray(inputs.V[kv_of])  # [s, m, d_v]
        return None, None, Q, K, V
    X = inputs.X
    pe = positional_table(config.positional, max(n, m), config.d_model, config.positional_seed)
    if pe is not None:
        X = X + pe[:n]  # [n, d_model]
    X_kv = inputs.X_kv if config.attention == "cross" else None
    if X_kv is not None and pe is not None:
        X_kv = X_kv + pe[:m]  # [m, d_model]
    Xq = lib.asarray(X)  # [n, d_model]
    Xk = lib.asarray(X_kv) if X_kv is not None else Xq  # [m, d_model]

    def heads_of(W, b, width, which, source, rows):
        # Keep only the columns of the needed heads before multiplying (cheap for long n).
        first = which[0]
        if list(which) == list(range(first, first + len(which))):  # consecutive heads: a view
            cols = slice(first * width, (first + len(which)) * width)
            W_part, b_part = W[:, cols], (None if b is None else b[cols])
        else:
            cols = (np.asarray(which)[:, None] * width + np.arange(width)).reshape(-1)  # [s*width]
            W_part, b_part = W[:, cols], (None if b is None else b[cols])
        out = xp.matmul(source, lib.asarray(W_part))  # [rows, s*width]
        if b_part is not None:
            out = out + lib.asarray(b_part)
        out = xp.reshape(out, (rows, len(which), width))  # [rows, s, width]
        return xp.permute_dims(out, (1, 0, 2))  # [s, rows, width]

    Q = heads_of(inputs.W_Q, inputs.b_Q, dk, list(heads), Xq, n)
    K = heads_of(inputs.W_K, inputs.b_K, dk, kv_of, Xk, m)
    V = heads_of(inputs.W_V, inputs.b_V, dv, kv_of, Xk, m) if need_v else None
    del h
    return Xq, (Xk if X_kv is not None else None), Q, K, V


def _all_finite(xp, *arrays) -> bool:
    """True when every value of every array is finite."""
    return all(bool(xp.all(xp.isfinite(a))) for a in arrays)


def _scores_cannot_overflow(lib: ArrayLib, Q, K, factor: float, n: int, m: int) -> bool:
    """True when no score, scaled score or normalizer sum can overflow the dtype.

    |q . k| <= d_k max|q| max|k|, and the normalizers add at most max(n, m) such values; while
    that stays below a quarter of the dtype's largest number, the [n, m] finiteness check
    (a full extra pass over every score) is not needed.
    """
    xp = lib.xp
    limit = float(xp.finfo(lib.dtype).max) / (4 * max(n, m, 1))
    bound = Q.shape[-1] * float(xp.max(xp.abs(Q))) * float(xp.max(xp.abs(K))) * max(1.0, factor)
    return bound <= limit  # False for inf and nan too


def _run(inputs, config, lib: ArrayLib, n: int, m: int, selected, keep) -> Trace:
    xp = lib.xp
    needs_all = bool({"concat", "output"} & keep)
    needs_heads = needs_all or "head_outputs" in keep
    run_heads = tuple(range(config.heads)) if needs_all else selected
    need_v = needs_heads or "V" in keep
    X, X_kv, Q, K, V = _project(lib, config, inputs, n, m, run_heads, need_v)
    if not _all_finite(
        xp, Q, K, *([V] if need_v else [])
    ):  # projections of inputs near 1e30 can overflow float32
        return _overflow_trace(config, lib)
    allowed_np = allowed_mask(config, n, m)  # [n, m] bool
    fully_masked = tuple(int(i) for i in np.flatnonzero(~allowed_np.any(axis=1)))
    allowed = lib.asbool(allowed_np)  # [n, m]
    # torch can hide keys in place when the scaled stage is not kept (no [n, m] allocation)
    in_place = lib.backend.name == "torch" and "scaled" not in keep
    hidden = lib.asbool(~allowed_np) if in_place else None  # [n, m]
    factor = config.scale_value() / config.temperature
    check_each = not _scores_cannot_overflow(lib, Q, K, factor, n, m)
    kept = {name: [] for name in PER_HEAD_STAGES if name in keep}
    outputs = []
    if run_heads == selected and keep & set(SQUARE_STAGES):
        # Every head's [n, m] stages are kept anyway: chunking would save little memory and
        # cost a concatenating copy of each kept stage.
        per_chunk = len(run_heads)
    else:
        per_chunk = max(1, CHUNK_ELEMENTS // max(1, n * m))
    for start in range(0, len(run_heads), per_chunk):
        part = slice(start, start + per_chunk)
        q, k = Q[part], K[part]  # [c, n, d_k], [c, m, d_k]
        v = V[part] if need_v else None  # [c, m, d_v]
        if "scores" in kept:
            scores = xp.matmul(q, xp.permute_dims(k, (0, 2, 1)))  # [c, n, m]
            scaled = scores * factor  # [c, n, m]
        else:  # scores not kept: fold the factor into q, saving a pass over [c, n, m]
            scores = None
            scaled = xp.matmul(q * factor, xp.permute_dims(k, (0, 2, 1)))  # [c, n, m]
        if check_each and not _all_finite(xp, scaled):
            return _overflow_trace(config, lib)
        if in_place:
            masked = scaled.masked_fill_(hidden, -np.inf)  # [c, n, m], scaled is not kept
        else:
            masked = xp.where(allowed, scaled, -xp.inf)  # [c, n, m]
        weights = normalize(xp, config.normalizer, masked, allowed if fully_masked else None)
        if check_each and not _all_finite(xp, weights):
            return _overflow_trace(config, lib)
        head_out = None
        if needs_heads:
            head_out = xp.matmul(weights, v)  # [c, n, d_v]
            if not _all_finite(xp, head_out):
                return _overflow_trace(config, lib)
            outputs.append(head_out)
        chunk_heads = run_heads[part]
        rows = [i for i, hd in enumerate(chunk_heads) if hd in selected]
        values = {"Q": q, "K": k, "V": v, "scores": scores, "scaled": scaled, "masked": masked,
                  "weights": weights, "head_outputs": head_out}  # fmt: skip
        for name, value in values.items():
            if name in kept and rows:
                kept[name].append(value if len(rows) == len(chunk_heads) else value[rows])
        del scores, scaled, masked, weights, head_out, values
    stages: dict[str, np.ndarray | None] = {name: None for name in ALL_STAGES}
    for name in list(kept):
        parts = kept.pop(name)  # dropped as soon as joined, so no stage is held twice for long
        stages[name] = lib.to_numpy(parts[0] if len(parts) == 1 else xp.concat(parts, axis=0))
        del parts
    if "X" in keep and X is not None:
        stages["X"] = lib.to_numpy(X)
    if "X_kv" in keep and X_kv is not None:
        stages["X_kv"] = lib.to_numpy(X_kv)
    if "mask" in keep:
        stages["mask"] = allowed_np
    if needs_all:
        heads_all = xp.concat(outputs, axis=0) if len(outputs) > 1 else outputs[0]  # [h, n, d_v]
        concat = xp.reshape(xp.permute_dims(heads_all, (1, 0, 2)), (n, -1))  # [n, h*d_v]
        if "concat" in keep:
            stages["concat"] = lib.to_numpy(concat)
        if "output" in keep and inputs.W_O is not None and config.use_output_projection:
            out = xp.matmul(concat, lib.asarray(inputs.W_O))  # [n, d_out]
            if inputs.b_O is not None:
                out = out + lib.asarray(inputs.b_O)
            if not _all_finite(xp, out):
                return _overflow_trace(config, lib)
            stages["output"] = lib.to_numpy(out)
    return Trace(
        config=config,
        inputs=inputs,
        backend=lib.backend,
        dtype=str(lib.dtype).replace("torch.", ""),
        heads=selected,
        tokens=(),
        kv_tokens=(),
        stages=stages,
        fully_masked_rows=fully_masked,
        scale=config.scale_value(),
    )


def _overflow_trace(config: AttentionConfig, lib: ArrayLib) -> Trace:
    return Trace(config=config, inputs=None, backend=lib.backend, dtype="", heads=(), tokens=(),
                 kv_tokens=(), notes=("overflow",))  # fmt: skip
