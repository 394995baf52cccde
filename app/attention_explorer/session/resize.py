"""Size changes (tokens, heads, d_model, d_k, kv heads, mode) that keep what the learner built.

Each function takes and returns a :class:`SessionData`; :func:`resize` applies several at once.
Rules:

- numbers that still fit are kept; a change of head count with d_model fixed only regroups
  the same columns of W_Q, W_K, W_V and rows of W_O (and keeps the biases);
- where a matrix grows, per head, the new numbers are seeded random values at the spread of
  the numbers already there (Xavier scale 1/sqrt(d_model) for an empty weight matrix), so the
  same change always gives the same numbers and a new row never dwarfs the old ones;
- new tokens get names no other token has;
- what a cut took (rows, columns, names) comes back when the size grows again within the
  session (:mod:`attention_explorer.session.cut_memory`).
"""

from __future__ import annotations

import math

import numpy as np

from attention_explorer.engine import AttentionInputError
from attention_explorer.engine.variants.norm_weights import refit_norm_weights
from attention_explorer.engine.variants.sink_logit import fitted_sinks
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.cut_memory import MEMORY
from attention_explorer.session.document import SessionData

FILL_SEED = 7


def spread(array: np.ndarray | None) -> float | None:
    """The typical size of the numbers in ``array``: their standard deviation (or mean
    magnitude when they are all equal); None when there is nothing to measure."""
    if array is None or array.size == 0:
        return None
    values = np.asarray(array, dtype=np.float64).ravel()  # [size]
    std = float(values.std()) if values.size > 1 else 0.0
    if std > 0:
        return std
    magnitude = float(np.abs(values).mean())
    return magnitude if magnitude > 0 else None


def fit(
    array: np.ndarray | None,
    shape: tuple[int, ...],
    seed: int = FILL_SEED,
    empty_scale: float = 1.0,
) -> np.ndarray:
    """``array`` cut or grown to ``shape``: kept where it overlaps, seeded values elsewhere.

    New values are drawn at the spread of ``array`` (``empty_scale`` when it has none) and
    rounded to two significant decimals of that spread.
    """
    scale = spread(array) or empty_scale
    decimals = 2 + max(0, math.ceil(-math.log10(scale)))
    rng = np.random.default_rng([seed, *shape])
    out = np.round(rng.normal(0.0, scale, size=shape), decimals)  # shape
    if array is not None and array.ndim == len(shape):
        MEMORY.regrow(array, out)  # what an earlier cut took, back where it grows again
        block = tuple(slice(0, min(a, b)) for a, b in zip(array.shape, shape))
        out[block] = array[block]
        MEMORY.remember(out, array)  # a cut: kept for when this grows again
    return out


def fit_head_columns(
    W: np.ndarray | None,
    rows: int,
    heads: int,
    width: int,
    old_heads: int,
    empty_scale: float = 1.0,
) -> np.ndarray | None:
    """A matrix ``[rows, heads*width]`` whose columns are grouped per head, from ``W``.

    Same total width: the same columns, regrouped into ``heads`` (what a head count with
    d_model fixed means); only rows are cut or grown. Otherwise ``W``'s ``old_heads`` groups
    each keep their first columns and grow or shrink on their own, and new heads are added.
    A 1-D ``W`` (a bias ``[heads*width]``) is treated as one row; None stays None.
    """
    if W is None:
        return None
    if W.ndim == 1:
        return fit_head_columns(W[None, :], 1, heads, width, old_heads, empty_scale)[0]
    if W.shape[1] == heads * width or W.shape[1] % max(1, old_heads):
        return fit(W, (rows, heads * width), empty_scale=empty_scale)
    old_width = W.shape[1] // old_heads
    per_head = W.reshape(W.shape[0], old_heads, old_width)  # [rows, old_h, old_width]
    grown = fit(per_head, (rows, heads, width), empty_scale=empty_scale)  # [rows, h, width]
    return grown.reshape(rows, heads * width)


def fit_head_rows(
    W: np.ndarray | None, heads: int, width: int, cols: int, old_heads: int, scale: float = 1.0
) -> np.ndarray | None:
    """W_O ``[heads*width, cols]`` from ``W``, its rows grouped per head (see fit_head_columns)."""
    if W is None:
        return None
    return fit_head_columns(W.T, cols, heads, width, old_heads, scale).T


def unique_names(existing: tuple[str, ...], count: int, prefix: str = "t") -> tuple[str, ...]:
    """``count`` new names ``t3``, ``t4`` ... that none of ``existing`` has."""
    taken, names = set(existing), []
    k = len(existing)
    while len(names) < count:
        name = f"{prefix}{k}"
        if name not in taken:
            names.append(name)
            taken.add(name)
        k += 1
    return tuple(names)


def _xavier(config) -> float:
    return 1.0 / math.sqrt(max(1, config.d_model))


def set_token_count(data: SessionData, n: int) -> SessionData:
    """Grow or shrink the (query) sequence to ``n`` tokens; in self-attention keys follow."""
    if n < 1:
        raise AttentionInputError("tokens", "there must be at least one token")
    config, inputs = data.config, data.inputs
    MEMORY.remember_names(data.tokens[:n], data.tokens)
    kept = MEMORY.names(data.tokens)[:n]  # names cut earlier come back
    tokens = kept + unique_names(kept, n - len(kept))
    cross = config.attention == "cross"
    m = len(data.kv_tokens) if cross else n
    if config.mode == "direct":
        changes = {"Q": fit(inputs.Q, (config.heads, n, config.head_dim))}
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
    MEMORY.remember_names(data.kv_tokens[:m], data.kv_tokens)
    kept = MEMORY.names(data.kv_tokens)[:m]
    kv_tokens = kept + unique_names(kept, m - len(kept), prefix="k")
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


def _refit(data: SessionData, new) -> SessionData:
    """Every array of ``data`` refitted to the sizes of config ``new`` (same mode, same tokens).

    Per-head blocks grow or shrink head by head; a same-width block is only regrouped.
    """
    inputs, old_h, old_kv = data.inputs, data.config.heads, data.config.n_kv_heads
    h, kv, dk, dv = new.heads, new.n_kv_heads, new.head_dim, new.value_dim
    n, m = len(data.tokens), len(data.key_tokens)
    if new.mode == "direct":
        changes = {
            "Q": fit(inputs.Q, (h, n, dk)),
            "K": fit(inputs.K, (kv, m, dk)),
            "V": fit(inputs.V, (kv, m, dv)),
        }
        if inputs.W_O is not None:
            changes["W_O"] = fit_head_rows(inputs.W_O, h, dv, inputs.W_O.shape[1], old_h)
        changes.update(refit_norm_weights(inputs, data.config, new))
        changes["sinks"] = fitted_sinks(inputs.sinks, data.config, new)
        return data.with_changes(config=new, inputs=inputs.with_changes(**changes))
    dm, xavier = new.d_model, _xavier(new)
    changes = {
        "X": fit(inputs.X, (n, dm)),
        "W_Q": _weights(inputs.W_Q, dm, h, dk, old_h, xavier),
        "W_K": _weights(inputs.W_K, dm, kv, dk, old_kv, xavier),
        "W_V": _weights(inputs.W_V, dm, kv, dv, old_kv, xavier),
        "W_O": _weights_o(inputs.W_O, dm, h, dv, old_h, xavier),
        "b_Q": fit_head_columns(inputs.b_Q, 1, h, dk, old_h),
        "b_K": fit_head_columns(inputs.b_K, 1, kv, dk, old_kv),
        "b_V": fit_head_columns(inputs.b_V, 1, kv, dv, old_kv),
        "b_O": None if inputs.b_O is None else fit(inputs.b_O, (dm,)),
        **refit_norm_weights(inputs, data.config, new),
        "sinks": fitted_sinks(inputs.sinks, data.config, new),
    }
    if new.attention == "cross":
        changes["X_kv"] = fit(inputs.X_kv, (len(data.kv_tokens), dm))
    return data.with_changes(config=new, inputs=inputs.with_changes(**changes))


def _rows(W: np.ndarray | None, rows: int, scale: float) -> np.ndarray | None:
    """``W`` with ``rows`` rows (new rows at its spread), its columns untouched."""
    return None if W is None else fit(W, (rows, W.shape[1]), empty_scale=scale)


def _weights(W, dm: int, heads: int, width: int, old_heads: int, scale: float):
    """W_Q, W_K or W_V ``[dm, heads*width]`` from ``W``: rows then head columns when d_model
    shrinks, head columns then rows when it grows (the reverse order of a cut, so the cut
    memory finds each step's numbers again)."""
    if W is None or dm < W.shape[0]:
        return fit_head_columns(_rows(W, dm, scale), dm, heads, width, old_heads, scale)
    wide = fit_head_columns(W, W.shape[0], heads, width, old_heads, scale)
    return _rows(wide, dm, scale)


def _weights_o(W, dm: int, heads: int, width: int, old_heads: int, scale: float):
    """W_O ``[heads*width, dm]``: :func:`_weights` of its transpose."""
    return None if W is None else _weights(W.T, dm, heads, width, old_heads, scale).T


def set_heads(data: SessionData, heads: int) -> SessionData:
    """Change the number of heads.

    Projection mode keeps d_model: d_k = d_model / heads, and W_Q, W_K, W_V, W_O and the
    biases are the same numbers regrouped. Direct mode keeps d_k and each head's Q, K, V.
    """
    return _refit(data, _heads_config(data.config, heads))


def _heads_config(config, heads: int):
    """``config`` with ``heads`` heads (d_k derived in projection mode), or a named refusal."""
    if heads < 1:
        raise AttentionInputError("heads", "there must be at least one head")
    if config.mode == "projection":  # d_k derived: the config says which heads divide d_model
        config.with_changes(heads=heads, kv_heads=None, d_k=None).validate()
    kv = config.kv_heads
    if kv is not None and (kv > heads or heads % kv):
        kv = None
    if config.mode == "direct":
        return config.with_changes(
            heads=heads, kv_heads=kv, d_k=config.head_dim, d_v=config.value_dim
        )
    return config.with_changes(heads=heads, kv_heads=kv, d_k=None, d_v=None)


def set_kv_heads(data: SessionData, kv_heads: int) -> SessionData:
    """Share each key/value head among ``heads / kv_heads`` query heads (grouped-query)."""
    config = data.config
    if kv_heads < 1:
        raise AttentionInputError("kv_heads", "there must be at least one key/value head")
    config.with_changes(kv_heads=kv_heads).validate()  # the config's one message
    value = None if kv_heads == config.heads else kv_heads
    return _refit(data, config.with_changes(kv_heads=value))


def set_head_dim(data: SessionData, d_k: int) -> SessionData:
    """Change d_k (and d_v with it) for every head; each head keeps its first columns."""
    if d_k < 1:
        raise AttentionInputError("d_k", "d_k must be at least 1")
    return _refit(data, data.config.with_changes(d_k=d_k, d_v=d_k))


def set_d_model(data: SessionData, d_model: int) -> SessionData:
    """Change the embedding width; in projection mode every weight matrix follows."""
    config = data.config
    if d_model < 1:
        raise AttentionInputError("d_model", "d_model must be at least 1")
    new = config.with_changes(d_model=d_model)
    if config.mode != "projection":  # Q, K, V are typed: d_k stays what they are
        pinned = new.with_changes(d_k=config.head_dim, d_v=config.value_dim)
        return data.with_changes(config=pinned)
    new.validate()  # d_model must split into the heads: the config's one message
    return _refit(data, new)


def resize(
    data: SessionData,
    *,
    tokens: int | None = None,
    heads: int | None = None,
    d_model: int | None = None,
    d_k: int | None = None,
    kv_heads: int | None = None,
) -> SessionData:
    """``data`` with the sizes given changed and every number that still fits kept.

    d_model and heads change together, so d_model 8 -> 9 with heads 2 -> 3 works.
    Raises AttentionInputError naming the size that cannot be had.
    """
    if d_model is not None and heads is not None:
        if d_model < 1:
            raise AttentionInputError("d_model", "d_model must be at least 1")
        data = _refit(data, _heads_config(data.config.with_changes(d_model=d_model), heads))
    elif d_model is not None:
        data = set_d_model(data, d_model)
    elif heads is not None:
        data = set_heads(data, heads)
    if kv_heads is not None:
        data = set_kv_heads(data, kv_heads)
    if d_k is not None:
        data = set_head_dim(data, d_k)
    if tokens is not None:
        data = set_token_count(data, tokens)
    return data


def _direct_accepts(config) -> bool:
    """True when the engine takes ``config``'s positional setting in direct mode (RoPE)."""
    try:
        config.with_changes(mode="direct", d_k=config.head_dim, d_v=config.value_dim).validate()
    except AttentionInputError:
        return False
    return config.positional != "none"


def set_mode(data: SessionData, mode: str) -> SessionData:
    """Switch between typing Q/K/V directly and projecting them from X.

    projection -> direct keeps the numbers: Q, K, V become the current projections.
    RoPE stays on (theta, scaling, offset with it): Q and K are typed as projected, before
    rotation, and the engine rotates them in direct mode as it did, so Q_rot, K_rot, the
    scores and everything after are unchanged. A table added to X (sinusoidal, learned)
    is already inside the projections, so it becomes "none".
    direct -> projection starts from seeded X and Xavier-scaled weights with
    d_model = heads * d_k; the positional setting stays.
    """
    config = data.config
    if mode == config.mode:
        return data
    if mode == "direct":
        trace = compute_session(data, dtype="float64")
        kv_rows = list(range(0, config.heads, config.kv_group))
        inputs = data.inputs.__class__(
            Q=trace["Q"],
            K=trace["K"][kv_rows],
            V=trace["V"][kv_rows],
            W_O=data.inputs.W_O,
            b_O=data.inputs.b_O,
            q_norm=data.inputs.q_norm,  # QK-norm applies to typed q and k alike
            k_norm=data.inputs.k_norm,
            sinks=data.inputs.sinks,  # a logit per head: the same in both modes
        )
        positional = config.positional if _direct_accepts(config) else "none"
        new = config.with_changes(
            mode="direct", positional=positional, d_k=config.head_dim, d_v=config.value_dim
        )
        return data.with_changes(config=new, inputs=inputs)
    h, dk = config.heads, config.head_dim
    dm = h * dk
    n, m = len(data.tokens), len(data.key_tokens)
    kv, xavier = config.n_kv_heads, 1.0 / math.sqrt(dm)
    inputs = data.inputs.__class__(
        X=fit(None, (n, dm), seed=1),
        W_Q=fit(None, (dm, h * dk), seed=2, empty_scale=xavier),
        W_K=fit(None, (dm, kv * dk), seed=3, empty_scale=xavier),
        W_V=fit(None, (dm, kv * config.value_dim), seed=4, empty_scale=xavier),
        W_O=fit(data.inputs.W_O, (h * config.value_dim, dm), seed=5, empty_scale=xavier),
        X_kv=fit(None, (m, dm), seed=6) if config.attention == "cross" else None,
        q_norm=data.inputs.q_norm,
        k_norm=data.inputs.k_norm,
        sinks=data.inputs.sinks,
    )
    d_v = None if config.value_dim == dk else config.value_dim
    new = config.with_changes(mode="projection", d_model=dm, d_k=None, d_v=d_v)  # d_k derived
    return data.with_changes(config=new, inputs=inputs)
