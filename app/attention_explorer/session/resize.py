"""Size changes (tokens, heads, d_model, d_k, mode) that keep every matrix consistent.

Each function takes and returns a :class:`SessionData`. Numbers that still fit are kept;
new rows and columns are filled with seeded random values rounded to two decimals, so the
same change always gives the same numbers.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.engine import AttentionInputError, compute
from attention_explorer.engine.config import divisors
from attention_explorer.session.document import SessionData

FILL_SEED = 7


def fit(array: np.ndarray | None, shape: tuple[int, ...], seed: int = FILL_SEED) -> np.ndarray:
    """``array`` cut or grown to ``shape``: kept where it overlaps, seeded values elsewhere."""
    rng = np.random.default_rng([seed, *shape])
    out = np.round(rng.normal(0.0, 1.0, size=shape), 2)  # shape
    if array is not None and array.ndim == len(shape):
        block = tuple(slice(0, min(a, b)) for a, b in zip(array.shape, shape))
        out[block] = array[block]
    return out


def _fit_heads(
    W: np.ndarray | None, rows: int, heads: int, width: int, old_width: int
) -> np.ndarray:
    """Resize a per-head column block matrix ``[rows, heads*width]``, head by head."""
    if W is None:
        return fit(None, (rows, heads * width))
    old_heads = max(1, W.shape[1] // max(1, old_width))
    per_head = W.reshape(W.shape[0], old_heads, old_width)  # [rows, h, width]
    return fit(per_head, (rows, heads, width)).reshape(rows, heads * width)


def default_token_names(count: int, start: int = 0) -> tuple[str, ...]:
    """Names for new tokens: ``t3``, ``t4`` ..."""
    return tuple(f"t{i}" for i in range(start, start + count))


def set_token_count(data: SessionData, n: int) -> SessionData:
    """Grow or shrink the (query) sequence to ``n`` tokens; in self-attention keys follow."""
    if n < 1:
        raise AttentionInputError("tokens", "there must be at least one token")
    config, inputs = data.config, data.inputs
    old = len(data.tokens)
    tokens = data.tokens[:n] + default_token_names(max(0, n - old), old)
    cross = config.attention == "cross"
    m = len(data.kv_tokens) if cross else n
    if config.mode == "direct":
        q = fit(inputs.Q, (config.heads, n, config.head_dim))
        changes = {"Q": q}
        if not cross:
            kv = config.n_kv_heads
            changes["K"] = fit(inputs.K, (kv, n, config.head_dim))
            changes["V"] = fit(inputs.V, (kv, n, config.value_dim))
        inputs = inputs.with_changes(**changes)
    else:
        inputs = inputs.with_changes(X=fit(inputs.X, (n, config.d_model)))
    return data.with_changes(tokens=tokens, inputs=inputs, config=_fit_mask(config, n, m))


def set_key_token_count(data: SessionData, m: int) -> SessionData:
    """Grow or shrink the key/value sequence of cross-attention to ``m`` tokens.

    K and V (direct mode) or X_kv (projection mode) follow; numbers that still fit are kept.
    In self-attention the keys are the tokens, so this is :func:`set_token_count`.
    """
    config, inputs = data.config, data.inputs
    if config.attention != "cross":
        return set_token_count(data, m)
    if m < 1:
        raise AttentionInputError("kv_tokens", "there must be at least one key token")
    old = len(data.kv_tokens)
    kv_tokens = data.kv_tokens[:m] + tuple(f"k{i}" for i in range(old, m))
    if config.mode == "direct":
        kv = config.n_kv_heads
        inputs = inputs.with_changes(
            K=fit(inputs.K, (kv, m, config.head_dim)), V=fit(inputs.V, (kv, m, config.value_dim))
        )
    else:
        inputs = inputs.with_changes(X_kv=fit(inputs.X_kv, (m, config.d_model)))
    new_config = _fit_mask(config, len(data.tokens), m)
    return data.with_changes(kv_tokens=kv_tokens, inputs=inputs, config=new_config)


def _fit_mask(config, n: int, m: int):
    changes: dict = {"padded_keys": tuple(j for j in config.padded_keys if j < m)}
    if config.custom_mask is not None:
        old = np.array(config.custom_mask, dtype=bool)
        grown = np.ones((n, m), dtype=bool)
        grown[: min(n, old.shape[0]), : min(m, old.shape[1])] = old[:n, :m]
        changes["custom_mask"] = tuple(tuple(bool(x) for x in row) for row in grown)
    return config.with_changes(**changes)


def set_padding(data: SessionData, pad_count: int) -> SessionData:
    """Use a padding mask that hides the last ``pad_count`` keys (0 turns the mask off)."""
    m = len(data.key_tokens)
    pad_count = max(0, min(pad_count, m))
    keys = tuple(range(m - pad_count, m))
    mask = "padding" if pad_count else "none"
    return data.with_changes(config=data.config.with_changes(mask=mask, padded_keys=keys))


def toggle_mask_cell(data: SessionData, i: int, j: int) -> SessionData:
    """Flip one cell of the custom mask, starting from the mask now in force."""
    from attention_explorer.engine.mask import allowed_mask

    n, m = len(data.tokens), len(data.key_tokens)
    allowed = allowed_mask(data.config, n, m).copy()  # [n, m]
    allowed[i, j] = not allowed[i, j]
    custom = tuple(tuple(bool(x) for x in row) for row in allowed)
    return data.with_changes(config=data.config.with_changes(mask="custom", custom_mask=custom))


def set_heads(data: SessionData, heads: int) -> SessionData:
    """Change the number of heads; projection mode keeps d_k = d_model / heads."""
    config, inputs = data.config, data.inputs
    if heads < 1:
        raise AttentionInputError("heads", "there must be at least one head")
    if config.mode == "projection" and config.d_model % heads:
        options = ", ".join(str(d) for d in divisors(config.d_model))
        raise AttentionInputError(
            "heads", f"d_model {config.d_model} is not divisible by {heads} heads; try {options}"
        )
    n, m = len(data.tokens), len(data.key_tokens)
    dk = config.head_dim if config.mode == "direct" else config.d_model // heads
    dv = dk if config.mode == "projection" else config.value_dim
    new = config.with_changes(heads=heads, kv_heads=None, d_k=dk, d_v=dv)
    if config.mode == "direct":
        inputs = inputs.with_changes(
            Q=fit(inputs.Q, (heads, n, dk)), K=fit(inputs.K, (heads, m, dk)),
            V=fit(inputs.V, (heads, m, dv)),
        )  # fmt: skip
        d_out = inputs.W_O.shape[1] if inputs.W_O is not None else None
    else:
        dm = config.d_model
        inputs = inputs.with_changes(
            W_Q=_fit_heads(inputs.W_Q, dm, heads, dk, config.head_dim),
            W_K=_fit_heads(inputs.W_K, dm, heads, dk, config.head_dim),
            W_V=_fit_heads(inputs.W_V, dm, heads, dv, config.value_dim),
            b_Q=None, b_K=None, b_V=None,
        )  # fmt: skip
        d_out = dm
    if d_out is not None:
        inputs = inputs.with_changes(W_O=fit(inputs.W_O, (heads * dv, d_out)))
    return data.with_changes(config=new, inputs=inputs)


def set_head_dim(data: SessionData, d_k: int) -> SessionData:
    """Change d_k (and d_v with it) for every head."""
    config, inputs = data.config, data.inputs
    if d_k < 1:
        raise AttentionInputError("d_k", "d_k must be at least 1")
    h, kv = config.heads, config.n_kv_heads
    n, m = len(data.tokens), len(data.key_tokens)
    new = config.with_changes(d_k=d_k, d_v=d_k)
    if config.mode == "direct":
        inputs = inputs.with_changes(
            Q=fit(inputs.Q, (h, n, d_k)),
            K=fit(inputs.K, (kv, m, d_k)),
            V=fit(inputs.V, (kv, m, d_k)),
        )
        d_out = inputs.W_O.shape[1] if inputs.W_O is not None else None
    else:
        dm = config.d_model
        inputs = inputs.with_changes(
            W_Q=_fit_heads(inputs.W_Q, dm, h, d_k, config.head_dim),
            W_K=_fit_heads(inputs.W_K, dm, kv, d_k, config.head_dim),
            W_V=_fit_heads(inputs.W_V, dm, kv, d_k, config.value_dim),
            b_Q=None, b_K=None, b_V=None,
        )  # fmt: skip
        d_out = dm
    if d_out is not None:
        inputs = inputs.with_changes(W_O=fit(inputs.W_O, (h * d_k, d_out)))
    return data.with_changes(config=new, inputs=inputs)


def set_d_model(data: SessionData, d_model: int) -> SessionData:
    """Change the embedding width; in projection mode every weight matrix follows."""
    config, inputs = data.config, data.inputs
    if d_model < 1:
        raise AttentionInputError("d_model", "d_model must be at least 1")
    new = config.with_changes(d_model=d_model)
    if config.mode == "projection":
        if d_model % config.heads and config.d_k is None:
            h = config.heads
            lower, upper = max(h, d_model - d_model % h), d_model - d_model % h + h
            raise AttentionInputError(
                "d_model",
                f"{d_model} is not divisible by {h} heads; try {lower} or {upper}, or fewer heads",
            )
        h, kv, dk, dv = new.heads, new.n_kv_heads, new.head_dim, new.value_dim
        n = len(data.tokens)
        inputs = inputs.with_changes(
            X=fit(inputs.X, (n, d_model)),
            W_Q=_fit_heads(fit(inputs.W_Q, (d_model, inputs.W_Q.shape[1])), d_model, h, dk,
                           config.head_dim),
            W_K=_fit_heads(fit(inputs.W_K, (d_model, inputs.W_K.shape[1])), d_model, kv, dk,
                           config.head_dim),
            W_V=_fit_heads(fit(inputs.W_V, (d_model, inputs.W_V.shape[1])), d_model, kv, dv,
                           config.value_dim),
            W_O=fit(inputs.W_O, (h * dv, d_model)),
            b_Q=None, b_K=None, b_V=None, b_O=None,
        )  # fmt: skip
        if config.attention == "cross":
            inputs = inputs.with_changes(X_kv=fit(inputs.X_kv, (len(data.kv_tokens), d_model)))
    return data.with_changes(config=new, inputs=inputs)


def set_mode(data: SessionData, mode: str) -> SessionData:
    """Switch between typing Q/K/V directly and projecting them from X.

    projection -> direct keeps the numbers: Q, K, V become the current projections.
    direct -> projection starts from seeded X and weights with d_model = heads * d_k.
    """
    config = data.config
    if mode == config.mode:
        return data
    if mode == "direct":
        trace = compute(data.inputs, config, tokens=data.tokens, dtype="float64")
        group = config.heads // config.n_kv_heads
        kv_rows = list(range(0, config.heads, group))
        inputs = data.inputs.__class__(
            Q=trace["Q"], K=trace["K"][kv_rows], V=trace["V"][kv_rows],
            W_O=data.inputs.W_O, b_O=data.inputs.b_O,
        )  # fmt: skip
        new = config.with_changes(mode="direct", positional="none")
        return data.with_changes(config=new, inputs=inputs)
    h, dk = config.heads, config.head_dim
    dm = h * dk
    n, m = len(data.tokens), len(data.key_tokens)
    kv = config.n_kv_heads
    inputs = data.inputs.__class__(
        X=fit(None, (n, dm), seed=1), W_Q=fit(None, (dm, h * dk), seed=2),
        W_K=fit(None, (dm, kv * dk), seed=3), W_V=fit(None, (dm, kv * config.value_dim), seed=4),
        W_O=fit(data.inputs.W_O, (h * config.value_dim, dm), seed=5),
        X_kv=fit(None, (m, dm), seed=6) if config.attention == "cross" else None,
    )  # fmt: skip
    new = config.with_changes(mode="projection", d_model=dm)
    return data.with_changes(config=new, inputs=inputs)
