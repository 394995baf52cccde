"""The model's forward pass up to one layer: embeddings, LayerNorm, GELU, feed-forward, and
each layer's attention computed by the explorer's own engine (``attention_explorer.compute``).

BERT (post-LN)::

    h = LN(word[ids] + position[0..n) + token_type[type_ids])          # [n, d]
    a = attention(h);  h1 = LN(h + a);  h = LN(h1 + FFN(h1))            # per layer

GPT-2 (pre-LN)::

    h = word[ids] + position[0..n)                                      # [n, d]
    a = attention(LN_1(h));  h = h + a;  h = h + FFN(LN_2(h))           # per layer

with ``FFN(x) = GELU(x W_in + b_in) W_out + b_out``. The attention's X is ``h`` for BERT and
``LN_1(h)`` for GPT-2: :func:`attention_input` is exactly what layer L's attention reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend, compute
from attention_explorer.engine.blas_threads import one_blas_thread
from attention_explorer.models.weights import ModelWeights

_erf = np.frompyfunc(math.erf, 1, 1)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis: ``(x - mean) / sqrt(var + eps) * gamma + beta``."""
    mean = x.mean(axis=-1, keepdims=True)  # [n, 1]
    centred = x - mean  # [n, d]
    var = (centred * centred).mean(axis=-1, keepdims=True)  # [n, 1]
    return centred / np.sqrt(var + eps) * gamma + beta  # [n, d]


def gelu(x: np.ndarray, kind: str) -> np.ndarray:
    """GELU: ``x/2 (1 + erf(x/√2))`` (BERT) or its tanh approximation (``gelu_tanh``, GPT-2)."""
    if kind == "gelu_tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)  # [n, d_ff]
        return 0.5 * x * (1.0 + np.tanh(inner))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))  # [n, d_ff]


def embed(w: ModelWeights, ids, type_ids) -> np.ndarray:
    """The input of layer 0: token + position (+ token type, LayerNorm for BERT). ``[n, d]``."""
    n = len(ids)
    h = w.word[np.asarray(ids)].astype(np.float64) + w.position[:n]  # [n, d]
    if w.token_type is not None:
        h = h + w.token_type[np.asarray(type_ids)]  # [n, d]
    if w.ln_embed is not None:
        h = layer_norm(h, *w.ln_embed, w.eps)
    return h


def attention_input(w: ModelWeights, layer: int, h: np.ndarray) -> np.ndarray:
    """What layer ``layer``'s attention reads from the hidden state ``h [n, d]``."""
    if w.family == "gpt2":
        return layer_norm(h, *w.layers[layer].ln_attn, w.eps)  # pre-LN: ln_1(h)
    return h  # post-LN: the hidden state itself


def attention_parts(w: ModelWeights, layer: int, x: np.ndarray):
    """The engine's (config, inputs) for layer ``layer`` applied to ``x [n, d]``."""
    lw = w.layers[layer]
    config = AttentionConfig(
        mode="projection",
        heads=w.heads,
        d_model=w.d_model,
        d_k=w.d_model // w.heads,
        mask="causal" if w.causal else "none",
    )
    inputs = AttentionInputs(
        X=x,
        W_Q=lw.W_Q,
        W_K=lw.W_K,
        W_V=lw.W_V,
        W_O=lw.W_O,
        b_Q=lw.b_Q,
        b_K=lw.b_K,
        b_V=lw.b_V,
        b_O=lw.b_O,
    )
    return config, inputs


def _rest_of_layer(w: ModelWeights, layer: int, h: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The layer after its attention output ``a [n, d]``: residuals, LayerNorms, feed-forward."""
    lw = w.layers[layer]

    def ffn(x: np.ndarray) -> np.ndarray:
        inner = gelu(x @ lw.W_in + lw.b_in, w.activation)  # [n, d_ff]
        return inner @ lw.W_out + lw.b_out  # [n, d]

    if w.family == "gpt2":
        h = h + a  # [n, d]
        return h + ffn(layer_norm(h, *lw.ln_ffn, w.eps))
    h1 = layer_norm(h + a, *lw.ln_attn, w.eps)  # [n, d]
    return layer_norm(h1 + ffn(h1), *lw.ln_ffn, w.eps)


def run_layers(
    w: ModelWeights,
    ids,
    type_ids,
    stop: int,
    backend: Backend | None = None,
    keep_weights: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Run layers ``0 .. stop-1``; return the hidden state after them ``[n, d]`` and, with
    ``keep_weights``, each layer's attention weights ``[heads, n, n]``.

    ``progress(done, stop)`` is called after each layer (for a progress bar).
    """
    weights: list[np.ndarray] = []
    stages = ("weights", "output") if keep_weights else ("output",)
    with one_blas_thread():
        h = embed(w, ids, type_ids)
        for layer in range(stop):
            config, inputs = attention_parts(w, layer, attention_input(w, layer, h))
            trace = compute(inputs, config, backend, dtype="float64", stages=stages)
            if keep_weights:
                weights.append(trace.stages["weights"])
            h = _rest_of_layer(w, layer, h, trace.stages["output"])
            if progress is not None:
                progress(layer + 1, stop)
    return h, weights
