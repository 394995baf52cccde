"""torch's primitives, the same names as :mod:`.numpy_ops` (``tests/kernels`` holds them equal):
the operations transformers itself runs (``layer_norm``, ``gelu``, ``softmax``, ``matmul``),
so the engine and the model run on torch read its optimised, multithreaded kernels, on the
cpu or a GPU. Imported only when an array or a backend asks for torch.

Shapes and mask conventions as in :mod:`.numpy_ops`. A numpy option with no torch
counterpart (the softmax's ``shift``: torch's fused softmax is always stable) is accepted and
has nothing to skip.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from types import MappingProxyType

import numpy as np
import torch
import torch.nn.functional as F

from attention_explorer.kernels import tables
from attention_explorer.kernels.names import ACTIVATION_PRIMITIVES, PRIMITIVES
from attention_explorer.kernels.portable import sparsemax

LIBRARY = "torch"
#: When every score lies within ±SCORE_BOUND, a softmax without the max pass is exact enough.
SCORE_BOUND = 60.0


def split_heads(x, count: int, contiguous: bool = False):
    """``x [n, count*d]`` as one matrix per head ``[count, n, d]`` (a view, or a copy)."""
    heads = x.reshape(x.shape[0], count, -1).transpose(0, 1)  # [count, n, d]
    return heads.contiguous() if contiguous else heads


def merge_heads(x):
    """Head outputs ``x [c, n, d]`` side by side, in head order: ``[n, c*d]``."""
    return x.transpose(0, 1).reshape(x.shape[1], -1)  # [n, c*d]


def linear(x, W, b=None):
    """``x [n, in] W [in, out] + b [out]`` as one fused product."""
    return x @ W if b is None else torch.addmm(b, x, W)  # [n, out]


def linear_split(x, W, b, sizes: Sequence[int]) -> list:
    """One product ``x W + b`` cut into column blocks of ``sizes`` (fused Q, K, V)."""
    return list(linear(x, W, b).split(list(sizes), dim=1))  # [n, size] each


def repeat_kv(x, group: int):
    """Key or value heads ``x [kv, n, d]`` repeated for ``kv * group`` query heads."""
    return x if group == 1 else x.repeat_interleave(group, dim=0)  # [kv*group, n, d]


def rotate_half(x):
    """``[..., d_k]`` -> ``[-x[d_k/2:], x[:d_k/2]]``: each pair (a, b) becomes (-b, a)."""
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)  # [..., d_k]


def rotation_tables(where, inv_freq, like=None):
    """RoPE's ``cos, sin [n, d_k]`` of positions ``where [n]`` (:func:`.tables.cos_sin`, in
    float64) as tensors on ``like``'s device and in its dtype (float64 on the cpu without)."""
    device, dtype = (None, torch.float64) if like is None else (like.device, like.dtype)
    return tuple(
        torch.from_numpy(t).to(device, dtype)  # [n, d_k]
        for t in tables.cos_sin(where, inv_freq)
    )


def rotate(x, cos, sin):
    """RoPE: ``x [.., n, d_k]`` turned pair by pair, ``x cos + rotate_half(x) sin``."""
    return x * cos + rotate_half(x) * sin  # [.., n, d_k]


def causal_mask(n: int, m: int, device=None):
    """``allowed [n, m]``: query i sees keys 0..i (top-left aligned, as torch's is_causal)."""
    return torch.ones((n, m), dtype=torch.bool, device=device).tril()  # [n, m]


def window_mask(n: int, m: int, window: int, device=None):
    """``allowed [n, m]``: query i sees the keys fewer than ``window`` positions back."""
    i = torch.arange(n, device=device)[:, None]  # [n, 1]
    j = torch.arange(m, device=device)[None, :]  # [1, m]
    return i - j < window  # [n, m]


def padding_mask(n: int, m: int, padded: Iterable[int], device=None):
    """``allowed [n, m]``: every query sees every key but the ``padded`` ones."""
    allowed = torch.ones((n, m), dtype=torch.bool, device=device)  # [n, m]
    allowed[:, list(padded)] = False
    return allowed


def blocked_keys(n: int, causal: bool, window: int | None, device=None):
    """``blocked [n, n]``, True where query i may NOT see key j (causal and/or a sliding
    window), or None when every key is visible."""
    if not causal and window is None:
        return None
    if causal:
        allowed = causal_mask(n, n, device)
    else:
        allowed = torch.ones((n, n), dtype=torch.bool, device=device)  # [n, n]
    if window is not None:
        allowed &= window_mask(n, n, window, device)
    return ~allowed  # [n, n]


def score(q, k, out=None):
    """Raw scores ``q k^T``: ``q [c, n, d]``, ``k [c, m, d]`` give ``[c, n, m]``."""
    if out is None:
        return torch.matmul(q, k.transpose(-1, -2))  # [c, n, m]
    return torch.matmul(q, k.transpose(-1, -2), out=out)


def scale(scores, factor: float, out=None):
    """Scores times ``factor`` (= scale / temperature), ``[c, n, m]``."""
    return scores * factor if out is None else torch.mul(scores, factor, out=out)


def scaled_score(q, k, factor: float, out=None):
    """:func:`score` and :func:`scale` in one product, the factor folded into the smaller q."""
    return score(q * factor, k, out=out)  # [c, n, m]


def mask_scores(scaled, allowed=None, blocked=None, out=None):
    """``scaled [c, n, m]`` where a key is allowed, else -inf: in place with ``blocked``
    (``masked_fill_``), else from ``allowed`` (into ``out`` when given)."""
    if blocked is not None:
        return scaled.masked_fill_(blocked, -math.inf)  # [c, n, m]
    hide = torch.tensor(-math.inf, dtype=scaled.dtype, device=scaled.device)
    if out is None:
        return torch.where(allowed, scaled, hide)  # [c, n, m]
    return torch.where(allowed, scaled, hide, out=out)


def softmax(masked, empty_rows: bool = False, out=None, shift: bool = True):
    """Softmax of each row of ``masked [.., n, m]`` (torch's fused kernel, into ``out`` when
    given); with ``empty_rows`` a row with no allowed key gives zeros, not NaN."""
    if out is None:
        weights = torch.softmax(masked, dim=-1)  # [.., n, m]
    else:
        weights = torch.softmax(masked, dim=-1, out=out)
    if empty_rows:
        weights = weights.nan_to_num_(nan=0.0)  # only a row with no allowed key is NaN
    return weights


def sigmoid(masked, empty_rows: bool = False, out=None):
    """Independent sigmoid per score (torch's fused, overflow-free kernel); -inf gives 0."""
    return masked.sigmoid()  # [.., n, m]


#: The engine's normalizers (softmax and its alternatives), by config name.
NORMALIZERS = MappingProxyType({"softmax": softmax, "sparsemax": sparsemax, "sigmoid": sigmoid})


def normalize(kind: str, masked, empty_rows: bool = False, out=None):
    """Normalizer ``kind`` of :data:`NORMALIZERS` applied to ``masked [.., n, m]``."""
    return NORMALIZERS[kind](masked, empty_rows=empty_rows, out=out)  # [.., n, m]


def scores_bounded(q, k, bound: float = SCORE_BOUND) -> bool:
    """True when every score of ``q [c, n, d]`` and ``k [c, m, d]`` lies within ±bound
    (Cauchy-Schwarz per head); False for a NaN or an infinity."""
    q_top = q.square().sum(-1).amax(1)  # [c]
    k_top = k.square().sum(-1).amax(1)  # [c]
    return bool((q_top * k_top).max() <= bound * bound)


def combine(weights, v, out=None):
    """Each head's output, the weighted sum of values: ``[c, n, m] @ [c, m, d_v]``."""
    return torch.matmul(weights, v) if out is None else torch.matmul(weights, v, out=out)


def attention(q, k, v, factor: float, blocked=None, out=None):
    """The attention core of query heads ``q [c, n, d_k]``, each with its own key and value
    head ``k [c, m, d_k]``, ``v [c, m, d_v]``: the weights ``[c, n, m]`` and their sums of
    values ``[c, n, d_v]``. ``out`` may be a tensor or, on the cpu, a numpy buffer (shared,
    no copy); the weights are then written there and ``out`` itself is returned."""
    target = out
    if isinstance(out, np.ndarray):
        target = torch.from_numpy(out) if q.device.type == "cpu" else None
    s = torch.matmul(q * factor, k.transpose(1, 2))  # [c, n, m]
    if blocked is not None:
        s.masked_fill_(blocked, -math.inf)
    p = softmax(s, out=target)  # [c, n, m]
    return (p if target is None else out), torch.matmul(p, v)  # [c, n, m], [c, n, d_v]


def knock_out(concat, knocked: Iterable[int], heads: int):
    """Zero the ``knocked`` heads' columns of ``concat [n, heads*d_v]`` in place."""
    d_v = concat.shape[1] // heads
    for head in knocked:
        concat[:, head * d_v : (head + 1) * d_v] = 0.0
    return concat


def layer_norm(x, gamma, beta, eps: float):
    """LayerNorm over the last axis of ``x [n, d]`` (torch's fused kernel)."""
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)


def rms_norm(x, gamma, beta, eps: float):
    """RMSNorm over the last axis of ``x [n, d]``: ``x / sqrt(mean(x²) + eps) * gamma``
    (+ beta if any), in x's dtype."""
    y = x * torch.rsqrt(x.square().mean(dim=-1, keepdim=True) + eps) * gamma  # [n, d]
    return y if beta is None else y + beta


#: The norms by the architecture record's name.
NORMS = MappingProxyType({"layernorm": layer_norm, "rmsnorm": rms_norm})


def gelu(x):
    """Exact GELU: ``x/2 (1 + erf(x/√2))``."""
    return F.gelu(x)


def gelu_tanh(x):
    """GELU's tanh approximation (``gelu_new``, ``gelu_pytorch_tanh``)."""
    return F.gelu(x, approximate="tanh")


def gelu_fast(x):
    """transformers' ``gelu_fast``: the tanh approximation with its truncated constant."""
    inner = x * 0.7978845608 * (1.0 + 0.044715 * x * x)
    return 0.5 * x * (1.0 + torch.tanh(inner))


def quick_gelu(x):
    """``x * sigmoid(1.702 x)``."""
    return x * torch.sigmoid(1.702 * x)


def relu(x):
    """``max(x, 0)``."""
    return F.relu(x)


def silu(x):
    """SiLU (swish): ``x * sigmoid(x)``."""
    return F.silu(x)


#: Every activation name a config may give, as transformers' ACT2FN spells them.
ACTIVATIONS = MappingProxyType(
    {name: globals()[primitive] for name, primitive in ACTIVATION_PRIMITIVES.items()}
)


def logits(x, decoder):
    """``x [n, d]`` times the ``[vocab, d]`` table ``decoder`` read a block at a time:
    ``[n, vocab]``."""
    return torch.cat([x @ rows.T for _, rows in decoder.blocks(x.dtype)], dim=1)


def all_finite(*arrays) -> bool:
    """True when every value of every tensor is finite, read from its smallest and largest
    value (``aminmax``, one pass and no temporary: ``isfinite`` + ``all`` took a quarter of
    a pass at n = 256): a NaN makes both NaN, +inf the largest, -inf the smallest."""
    for a in arrays:
        if a.numel() == 0:
            continue
        low, high = (float(v) for v in a.detach().aminmax())
        if not (math.isfinite(low) and math.isfinite(high)):
            return False
    return True


__all__ = list(PRIMITIVES)
