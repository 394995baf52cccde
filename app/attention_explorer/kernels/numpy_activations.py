"""numpy's feed-forward activations, vectorised: an exact erf in float64, a float32 one that
is accurate to float32's own rounding, and every activation name the families accept
(re-exported by :mod:`.numpy_ops`; torch's twins are in :mod:`.torch_ops`).

``erf`` in float64 uses a table of erf and its derivatives at multiples of 1/64 on [0, 6],
built once with :func:`math.erf`, and a degree-6 Taylor step from the nearest node: the step
is at most 1/128, so the remainder is below 1e-15. Beyond 6, ``erf = ±1`` to double precision.
In float32 it uses Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, float32's epsilon
is 1.2e-7), which costs a third of the table look-up.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

import numpy as np

from attention_explorer.kernels.names import ACTIVATION_PRIMITIVES

_PER_UNIT = 64  # table nodes per unit of x
_TOP = 6.0  # erf(x) == 1.0 in float64 from here on
_ORDER = 6  # Taylor terms after erf(x0)


def _table() -> np.ndarray:
    """``[ORDER + 1, nodes]``: erf(x0) and the Taylor coefficients erf^(k)(x0) / k!."""
    x0 = np.arange(int(_TOP * _PER_UNIT) + 1) / _PER_UNIT  # [nodes]
    table = np.empty((_ORDER + 1, x0.size))
    table[0] = [math.erf(v) for v in x0]
    gauss = 2.0 / math.sqrt(math.pi) * np.exp(-x0 * x0)  # erf'(x0) [nodes]
    h_prev, h = np.zeros_like(x0), np.ones_like(x0)  # physicists' Hermite H_{-1}, H_0
    for k in range(_ORDER):  # erf^(k+1)(x) = (-1)^k H_k(x) erf'(x)
        table[k + 1] = (-1) ** k * h * gauss / math.factorial(k + 1)
        h_prev, h = h, 2.0 * x0 * h - 2.0 * k * h_prev
    return table


_ERF_TABLE = _table()
_AS = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf64(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)  # [...]
    node = np.fmin(np.rint(a * _PER_UNIT), _TOP * _PER_UNIT).astype(np.intp)  # NaN -> last
    step = a - node / _PER_UNIT  # [...], |step| <= 1/128 below TOP
    y = _ERF_TABLE[_ORDER].take(node)  # [...]
    for k in range(_ORDER - 1, -1, -1):
        y *= step
        y += _ERF_TABLE[k].take(node)
    y = np.where(a >= _TOP, 1.0, y)
    return np.copysign(y, x)


def _erf32(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    t = 1.0 / (1.0 + np.float32(0.3275911) * a)  # [...]
    poly = np.float32(_AS[4])
    for c in _AS[3::-1]:
        poly = poly * t + np.float32(c)
    return np.copysign(1.0 - poly * t * np.exp(-a * a), x)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in ``x``'s dtype (float32 or float64)."""
    x = np.asarray(x)
    return _erf32(x) if x.dtype == np.float32 else _erf64(x.astype(np.float64, copy=False))


#: Elements per block of the float32 GELU: its scratch arrays stay in the CPU's cache.
GELU_BLOCK = 65536


def _gelu32_block(x: np.ndarray, out: np.ndarray, a: np.ndarray, t: np.ndarray) -> None:
    """GELU of one float32 block ``x`` into ``out``, in place (A&S 7.1.26 for erf).

    With ``z = x/√2`` and ``1 - erf(|z|) = t·poly(t)·exp(-z²)``, ``t = 1/(1 + p|z|)``::

        gelu(x) = x/2 (1 + erf(z)) = max(x, 0) - |x|/2 · t·poly(t)·exp(-x²/2)

    (for x < 0, x/2·(1 - erf|z|) = -|x|/2·(1 - erf|z|)), and ``max(x, 0) = (x + |x|)/2``
    exactly. The 1/√2 and the 1/2 are folded into the constants: 19 cheap passes over the
    block instead of 25, and no cancellation in ``1 - (1 - erf)`` (as accurate as the erf
    itself, 1.5e-7 of |x|/2). An infinite x gives NaN here (∞·0): :func:`_gelu32` mends it.
    """
    f32 = np.float32
    np.abs(x, out=a)  # |x|
    np.multiply(a, f32(0.3275911 / math.sqrt(2.0)), out=t)
    t += f32(1.0)
    np.divide(f32(1.0), t, out=t)  # t (a division is cheaper than np.reciprocal here)
    np.multiply(t, f32(_AS[4] / 2.0), out=out)
    for c in _AS[3::-1]:
        out += f32(c / 2.0)
        out *= t  # t·poly(t) / 2
    out *= a  # |x|/2 · t·poly(t)
    np.multiply(a, a, out=t)
    t *= f32(-0.5)
    np.exp(t, out=t)  # exp(-x²/2)
    out *= t
    np.add(x, a, out=t)
    t *= f32(0.5)  # max(x, 0)
    np.subtract(t, out, out=out)


#: From here on gelu(x) = max(x, 0) in float32 (and x·x would overflow).
_HUGE = np.float32(1e30)


_SCRATCH = threading.local()  # per thread: two float32 blocks, reused by every call


def _scratch() -> tuple[np.ndarray, np.ndarray]:
    """This thread's two GELU_BLOCK scratch arrays: fresh ones each call cost more than the
    [32, 1536] GELU itself (0.18 ms of page faults against 0.13 ms of arithmetic)."""
    pair = getattr(_SCRATCH, "pair", None)
    if pair is None:
        pair = _SCRATCH.pair = (np.empty(GELU_BLOCK, np.float32), np.empty(GELU_BLOCK, np.float32))
    return pair


def _gelu32(x: np.ndarray) -> np.ndarray:
    """Float32 GELU in cache-sized blocks with in-place steps: 5x faster than whole-array
    temporaries on a busy 2-core machine (3.7 ms against 20 ms for [256, 1536]); with the
    max(x, 0) form of the block and scratch kept per thread, 0.9 ms for [256, 1536] and
    0.12 ms for [32, 1536] (it was 1.2 and 0.35 ms; torch's fused kernel: 0.2 and 0.03 ms).
    Where an infinite or huge input made the block's result inf or NaN (the result's sum is
    then not finite) it is mended: max(x, 0) where |x| >= 1e30, NaN stays NaN."""
    flat = np.ascontiguousarray(x).reshape(-1)  # [size]
    result = np.empty_like(flat)
    a, t = _scratch()
    with np.errstate(over="ignore", invalid="ignore"):
        for lo in range(0, flat.size, GELU_BLOCK):
            hi = min(lo + GELU_BLOCK, flat.size)
            _gelu32_block(flat[lo:hi], result[lo:hi], a[: hi - lo], t[: hi - lo])
        if not np.isfinite(np.add.reduce(result)):  # gelu >= -0.17: no sum cancels an inf
            big = ~(np.abs(flat) < _HUGE)  # [size], NaN included
            result[big] = np.maximum(flat[big], np.float32(0.0))
    return result.reshape(x.shape)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU: ``x/2 (1 + erf(x/√2))`` (BERT's ``gelu``), in ``x``'s dtype."""
    if x.dtype == np.float32:
        return _gelu32(x)
    return 0.5 * x * (1.0 + erf(x * x.dtype.type(1.0 / math.sqrt(2.0))))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU's tanh approximation (GPT-2's ``gelu_new``, ``gelu_pytorch_tanh``)."""
    c = x.dtype.type(math.sqrt(2.0 / math.pi))
    return 0.5 * x * (1.0 + np.tanh(c * (x + x.dtype.type(0.044715) * x**3)))


def gelu_fast(x: np.ndarray) -> np.ndarray:
    """transformers' ``gelu_fast``: the tanh approximation with its truncated constant."""
    inner = x * x.dtype.type(0.7978845608) * (1.0 + x.dtype.type(0.044715) * x * x)
    return 0.5 * x * (1.0 + np.tanh(inner))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # no overflow for large |x|


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): ``x * sigmoid(x)``."""
    return x * _sigmoid(x)


def quick_gelu(x: np.ndarray) -> np.ndarray:
    """``x * sigmoid(1.702 x)``."""
    return x * _sigmoid(x.dtype.type(1.702) * x)


def relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)``."""
    return np.maximum(x, 0)


#: Every activation name a config may give, as transformers' ACT2FN spells them.
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    name: globals()[primitive] for name, primitive in ACTIVATION_PRIMITIVES.items()
}
