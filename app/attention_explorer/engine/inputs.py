"""The arrays an attention computation starts from, and their validation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace

import numpy as np

from attention_explorer.engine.config import AttentionConfig
from attention_explorer.engine.engine_errors import AttentionInputError

#: Inputs beyond this magnitude are refused: 1e30 still gives finite scores in float64.
MAX_ABS_INPUT = 1e30

#: QK-norm's weights, used in both modes when ``config.qk_norm`` is on.
QK_NORM_NAMES = ("q_norm", "k_norm")
#: The sink logits (one per head), used in both modes when ``config.attention_sinks`` is on.
SINK_NAMES = ("sinks",)
PROJECTION_NAMES = (
    "X", "X_kv", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O", *QK_NORM_NAMES,
    *SINK_NAMES,
)  # fmt: skip
DIRECT_NAMES = ("Q", "K", "V", "W_O", "b_O", *QK_NORM_NAMES, *SINK_NAMES)


@dataclass(frozen=True, eq=False)
class AttentionInputs:
    """Input arrays (numpy, any float dtype). Which ones matter depends on ``config.mode``.

    projection: ``X [n, d_model]``, ``X_kv [m, d_model]`` (cross-attention only),
    ``W_Q [d_model, h*d_k]``, ``W_K [d_model, kv*d_k]``, ``W_V [d_model, kv*d_v]``,
    ``W_O [h*d_v, d_model]`` (optional), biases ``b_Q [h*d_k]`` ... (optional).
    Math orientation: ``Q = X @ W_Q``.

    direct: ``Q [h, n, d_k]``, ``K [kv, m, d_k]``, ``V [kv, m, d_v]``, optional
    ``W_O [h*d_v, d_out]`` and ``b_O [d_out]``.

    Both modes, with QK-norm on: ``q_norm`` and ``k_norm``, the norms' weights ``[d_k]``
    (per head) or ``[h*d_k]`` and ``[kv*d_k]`` (over all heads); kept but unused while
    QK-norm is off. With attention sinks on: ``sinks [heads]``, each head's sink logit
    (kept but unused while they are off).
    """

    X: np.ndarray | None = None
    X_kv: np.ndarray | None = None
    W_Q: np.ndarray | None = None
    W_K: np.ndarray | None = None
    W_V: np.ndarray | None = None
    W_O: np.ndarray | None = None
    b_Q: np.ndarray | None = None
    b_K: np.ndarray | None = None
    b_V: np.ndarray | None = None
    b_O: np.ndarray | None = None
    Q: np.ndarray | None = None
    K: np.ndarray | None = None
    V: np.ndarray | None = None
    q_norm: np.ndarray | None = None
    k_norm: np.ndarray | None = None
    sinks: np.ndarray | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AttentionInputs):
            return NotImplemented
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if (a is None) != (b is None):
                return False
            if a is not None and (a.shape != b.shape or not np.array_equal(a, b)):
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays that are set, by name."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }

    def with_array(self, name: str, value: np.ndarray | None) -> AttentionInputs:
        """A copy with one array replaced (the object itself is treated as immutable)."""
        return replace(self, **{name: None if value is None else np.array(value, dtype=np.float64)})

    def with_changes(self, **arrays: np.ndarray | None) -> AttentionInputs:
        """A copy with several arrays replaced."""
        return replace(
            self,
            **{k: None if v is None else np.array(v, dtype=np.float64) for k, v in arrays.items()},
        )


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape) if shape else "a single number"


def _check(name: str, array: np.ndarray | None, expected: tuple[int, ...], what: str) -> None:
    if array is None:
        raise AttentionInputError(f"inputs.{name}", f"is missing; expected {what}")
    if array.shape != expected:
        raise AttentionInputError(
            f"inputs.{name}",
            f"expected {_shape_text(expected)} ({what}), got {_shape_text(array.shape)}",
        )


#: ``extremes(array) -> (smallest, largest)``, NaN when the array holds a NaN.
Extremes = Callable[[np.ndarray], tuple[float, float]]


def numpy_extremes(array: np.ndarray) -> tuple[float, float]:
    """The smallest and largest value of a non-empty array (NaN when it holds a NaN)."""
    return array.min(), array.max()


def _check_values(name: str, array: np.ndarray, extremes: Extremes) -> None:
    if not np.issubdtype(array.dtype, np.number):
        raise AttentionInputError(f"inputs.{name}", "must hold numbers")
    if array.size == 0:
        return
    low, high = extremes(array)
    if -MAX_ABS_INPUT <= low and high <= MAX_ABS_INPUT:
        return  # the common case, without temporaries (NaN propagates and compares False)
    finite = np.isfinite(array)
    if not finite.all():
        idx = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise AttentionInputError(
            f"inputs.{name}", f"value at {list(idx)} is {array[idx]!r}; only finite numbers work"
        )
    too_big = np.abs(array) > MAX_ABS_INPUT
    if too_big.any():
        idx = tuple(int(i) for i in np.argwhere(too_big)[0])
        raise AttentionInputError(
            f"inputs.{name}",
            f"value at {list(idx)} is {array[idx]:g}; values beyond ±{MAX_ABS_INPUT:g} are refused",
        )


def resolve_config(config: AttentionConfig, inputs: AttentionInputs) -> AttentionConfig:
    """Fill in d_k, d_v and kv_heads from the arrays in direct mode (where they are implied)."""
    if config.mode != "direct":
        return config
    changes: dict[str, int] = {}
    if config.d_k is None and inputs.Q is not None and inputs.Q.ndim == 3:
        changes["d_k"] = int(inputs.Q.shape[2])
    if config.d_v is None and inputs.V is not None and inputs.V.ndim == 3:
        changes["d_v"] = int(inputs.V.shape[2])
    if config.kv_heads is None and inputs.K is not None and inputs.K.ndim == 3:
        changes["kv_heads"] = int(inputs.K.shape[0])
    return config.with_changes(**changes) if changes else config


def validate_inputs(
    config: AttentionConfig, inputs: AttentionInputs, extremes: Extremes = numpy_extremes
) -> tuple[int, int]:
    """Check every array's shape and values against the config; return (n_queries, n_keys).

    Raises :class:`AttentionInputError` naming the array, e.g.
    ``inputs.K: expected 1x3x2 (heads x tokens x d_k), got 1x2x2``. ``extremes(array)``
    gives an array's (smallest, largest) value, NaN when it holds a NaN: numpy's by default;
    a torch pass reads them with torch (:func:`~.backend.extremes_for`).
    """
    # The settings first: with, say, 0 heads every expected shape would be wrong, and the
    # error must name the setting ("heads"), not an array that merely disagrees with it.
    config.validate()
    h, kv, dk, dv = config.heads, config.n_kv_heads, config.head_dim, config.value_dim
    for name, array in inputs.arrays().items():
        _check_values(name, array, extremes)
    if config.mode == "projection":
        X = inputs.X
        if X is None or X.ndim != 2 or X.shape[0] < 1:
            raise AttentionInputError("inputs.X", "expected tokens x d_model embeddings")
        n, dm = X.shape
        _check("X", X, (n, config.d_model), "tokens x d_model")
        m = n
        if config.attention == "cross":
            Xkv = inputs.X_kv
            if Xkv is None or Xkv.ndim != 2 or Xkv.shape[0] < 1:
                raise AttentionInputError(
                    "inputs.X_kv", "cross-attention needs the key/value sequence (tokens x d_model)"
                )
            m = Xkv.shape[0]
            _check("X_kv", Xkv, (m, dm), "tokens x d_model")
        _check("W_Q", inputs.W_Q, (dm, h * dk), f"d_model x heads*d_k, {h} heads of {dk}")
        _check("W_K", inputs.W_K, (dm, kv * dk), f"d_model x kv_heads*d_k, {kv} heads of {dk}")
        _check("W_V", inputs.W_V, (dm, kv * dv), f"d_model x kv_heads*d_v, {kv} heads of {dv}")
        for name, width in (("b_Q", h * dk), ("b_K", kv * dk), ("b_V", kv * dv)):
            if getattr(inputs, name) is not None:
                _check(name, getattr(inputs, name), (width,), f"one bias per column, {width}")
    else:
        Q = inputs.Q
        if Q is None or Q.ndim != 3:
            raise AttentionInputError("inputs.Q", "expected heads x tokens x d_k")
        n = Q.shape[1]
        K = inputs.K
        if K is None or K.ndim != 3:
            raise AttentionInputError("inputs.K", "expected kv_heads x tokens x d_k")
        m = K.shape[1] if config.attention == "cross" else n
        what = "heads x tokens x d_k"
        _check("Q", Q, (h, n, dk), what)
        _check("K", K, (kv, m, dk), "kv_heads x tokens x d_k")
        _check("V", inputs.V, (kv, m, dv), "kv_heads x tokens x d_v")
        if n < 1 or m < 1:
            raise AttentionInputError("inputs.Q", "needs at least one token")
    if inputs.W_O is not None and config.use_output_projection:
        W_O = inputs.W_O
        width = W_O.shape[1] if W_O.ndim == 2 else config.d_model
        _check("W_O", W_O, (h * dv, width), f"heads*d_v x d_out, {h} heads of {dv}")
        if inputs.b_O is not None:
            _check("b_O", inputs.b_O, (width,), f"one bias per output column, {width}")
    _check_qk_norm(config, inputs)
    _check_sinks(config, inputs)
    config._validate_mask_shape(n, m)  # the rest of config.validate() ran above
    return n, m


def _check_qk_norm(config: AttentionConfig, inputs: AttentionInputs) -> None:
    """With QK-norm on, ``q_norm`` and ``k_norm`` of the config's shape; off, any given ones
    are kept (turning QK-norm back on uses them) but must still be 1-D."""
    for name, which in (("q_norm", "q"), ("k_norm", "k")):
        array = getattr(inputs, name)
        shape = config.qk_norm_shape(which)
        heads = "heads" if which == "q" else "kv_heads"
        what = (
            f"one weight per dimension of a head, d_k {config.head_dim}"
            if config.qk_norm_width == "head"
            else f"one weight per dimension of all {heads}, {heads}*d_k"
        )
        if config.qk_normed:
            _check(name, array, shape, what)
        elif array is not None and array.ndim != 1:
            raise AttentionInputError(f"inputs.{name}", "expected one list of weights")


def _check_sinks(config: AttentionConfig, inputs: AttentionInputs) -> None:
    """With attention sinks on, ``sinks`` holds one logit per query head; off, any given ones
    are kept (turning the sinks back on uses them) but must still be one list."""
    if config.attention_sinks:
        _check("sinks", inputs.sinks, (config.heads,), f"one sink logit per head, {config.heads}")
    elif inputs.sinks is not None and inputs.sinks.ndim != 1:
        raise AttentionInputError("inputs.sinks", "expected one list of sink logits")
