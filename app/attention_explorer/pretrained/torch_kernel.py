"""The model run's arithmetic on torch: the norms, activations, attention block and output
head that :mod:`~attention_explorer.pretrained.forward` calls when the weights are torch
tensors (:func:`~attention_explorer.pretrained.torch_weights.on_torch`).

The structure of the forward pass (pre- or post-norm, gated or plain feed-forward, what the
output head is) stays written once, in ``forward.py``; only these primitives differ. They are
the operations transformers itself runs (``layer_norm``, ``gelu``, ``softmax``, ``matmul``),
so a run on torch reads the same optimised, multithreaded kernels, on the cpu or a GPU.

The run's results come back as numpy arrays: on a GPU, :func:`host_array` gives them pinned
host memory, so each layer's copy (:func:`copy_to_host`) runs while the next layer computes.

Imported only when a model run asks for ``backend="torch"``: the app without torch never
imports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import torch
import torch.nn.functional as F

from attention_explorer.pretrained.rotary import hidden_keys, rotation_tables

#: numpy's dtype of each torch float dtype a run uses.
NUMPY_DTYPES = {torch.float32: np.float32, torch.float64: np.float64}


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta, eps: float) -> torch.Tensor:
    """LayerNorm over the last axis of ``x [n, d]`` (torch's fused kernel)."""
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)


def rms_norm(x: torch.Tensor, gamma: torch.Tensor, beta, eps: float) -> torch.Tensor:
    """RMSNorm over the last axis of ``x [n, d]``: ``x / sqrt(mean(x²) + eps) * gamma``
    (+ beta if any), in x's dtype."""
    y = x * torch.rsqrt(x.square().mean(dim=-1, keepdim=True) + eps) * gamma  # [n, d]
    return y if beta is None else y + beta


NORMS = {"layernorm": layer_norm, "rmsnorm": rms_norm}


def _gelu_fast(x: torch.Tensor) -> torch.Tensor:
    inner = x * 0.7978845608 * (1.0 + 0.044715 * x * x)
    return 0.5 * x * (1.0 + torch.tanh(inner))


#: The same names as :data:`~attention_explorer.pretrained.activations.ACTIVATIONS`.
ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_fast": _gelu_fast,
    "quick_gelu": lambda x: x * torch.sigmoid(1.702 * x),
    "relu": F.relu,
    "silu": F.silu,
    "swish": F.silu,
}


def linear(x: torch.Tensor, W: torch.Tensor, b) -> torch.Tensor:
    """``x W + b`` (``W [in, out]``, bias or None) as one fused product."""
    return x @ W if b is None else torch.addmm(b, x, W)


def _heads(x: torch.Tensor, count: int) -> torch.Tensor:
    """``[n, count*d_head]`` as a ``[count, n, d_head]`` view."""
    return x.reshape(x.shape[0], count, -1).transpose(0, 1)


def rotate(x: torch.Tensor, inv_freq: np.ndarray) -> torch.Tensor:
    """``x [heads, n, d_k]`` rotated by position 0..n-1, as ``rotary.rotate`` does on numpy
    (angles in float64, then x's dtype)."""
    cos, sin = (
        torch.from_numpy(table).to(x.device, x.dtype)  # [n, d_k]
        for table in rotation_tables(x.shape[-2], inv_freq)
    )
    half = x.shape[-1] // 2
    turned = torch.cat([-x[..., half:], x[..., :half]], dim=-1)  # rotate_half [heads, n, d_k]
    return x * cos + turned * sin


def _projections(w, lw, x: torch.Tensor):
    """q ``[h, n, d_k]``, k ``[kv, n, d_k]``, v ``[kv, n, d_v]`` of ``x [n, d]``."""
    if lw.W_QKV is not None:
        d_q, d_kv = lw.W_Q.shape[1], lw.W_K.shape[1]
        parts = linear(x, lw.W_QKV, lw.b_QKV).split([d_q, d_kv, d_kv], dim=1)
    else:
        parts = [linear(x, lw.W_Q, lw.b_Q), linear(x, lw.W_K, lw.b_K), linear(x, lw.W_V, lw.b_V)]
    return _heads(parts[0], w.heads), _heads(parts[1], w.kv_heads), _heads(parts[2], w.kv_heads)


def attend(
    w, layer: int, x: torch.Tensor, knocked: Iterable[int] = (), out=None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Layer ``layer``'s attention on ``x [n, d]``: weights ``[heads, n, n]`` and the block's
    output ``[n, d]`` (before the residual), as :func:`kernel.attend` computes them on numpy.
    On the cpu the weights are written into ``out`` (a numpy ``[heads, n, n]`` buffer, when
    given) and it is handed back: no copy afterwards; on a GPU they come back as a tensor."""
    lw = w.layers[layer]
    n = x.shape[0]
    q, k, v = _projections(w, lw, x)
    if w.rope is not None:
        q, k = rotate(q, w.rope), rotate(k, w.rope)  # RoPE per head before the scores
    group = w.heads // w.kv_heads
    if group > 1:  # grouped-query attention: each key/value head serves `group` query heads
        k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    scores = torch.matmul(q * w.scales[layer], k.transpose(1, 2))  # [h, n, n]
    hidden = hidden_keys(n, w.causal, w.window)  # [n, n] True where a key is hidden
    if hidden is not None:
        scores.masked_fill_(torch.from_numpy(hidden).to(x.device), -math.inf)
    if out is not None and x.device.type == "cpu":
        p = torch.softmax(scores, dim=-1, out=torch.from_numpy(out))  # [h, n, n], in out
    else:
        p = torch.softmax(scores, dim=-1)  # [h, n, n]
    concat = torch.matmul(p, v).transpose(0, 1).reshape(n, -1)  # [n, h*d_v]
    d_v = concat.shape[1] // w.heads
    for head in knocked:  # a knocked-out head contributes nothing to concat · W_O
        concat[:, head * d_v : (head + 1) * d_v] = 0.0
    weights = out if out is not None and x.device.type == "cpu" else p
    return weights, linear(concat, lw.W_O, lw.b_O)  # [h, n, n], [n, d]


def logits(x: torch.Tensor, decoder) -> torch.Tensor:
    """``x [n, d]`` times the ``[vocab, d]`` table ``decoder`` (a torch view of a
    :class:`~attention_explorer.pretrained.checkpoint.stored.StoredTable`), read a block at a time:
    ``[n, vocab]``."""
    return torch.cat([x @ rows.T for _, rows in decoder.blocks(x.dtype)], dim=1)


def host_array(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """An empty numpy array in pinned (page-locked) host memory: a GPU copies into it without
    the cpu waiting, several times faster than into ordinary memory. torch keeps freed pinned
    blocks for reuse, so a run's buffers cost an allocation only the first time."""
    return torch.empty(shape, dtype=getattr(torch, dtype), pin_memory=True).numpy()


def copy_to_host(into: np.ndarray, value: torch.Tensor) -> None:
    """``value`` copied into the numpy array ``into`` (same shape); from a GPU without
    waiting: call :func:`wait` before reading ``into``."""
    torch.from_numpy(into).copy_(value, non_blocking=value.device.type != "cpu")


def wait(device: str) -> None:
    """Wait until every copy and kernel queued on ``device`` is done (nothing on the cpu)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
