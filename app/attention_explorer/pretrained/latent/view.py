"""The stages of a latent-attention layer as numbers for the learner: what each token's
latent is, how each head's key and value come out of it, the one rotary key every head
shares, and what the cache holds per token against full multi-head attention.

``latent_view(model, text, layer)`` runs the model to that layer (float64) and returns a
:class:`LatentView`; ``from_model`` on the same text and layer opens the session whose Q, K
and V are ``view.query``, ``view.key`` and ``view.value``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from attention_explorer.kernels import numpy_ops
from attention_explorer.pretrained.forward import attention_input, run_layers
from attention_explorer.pretrained.latent.attention import latent_stages
from attention_explorer.pretrained.layer_parts import layer_view
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.open_model import LoadedModel, load_model


@dataclass(frozen=True, eq=False)
class LatentView:
    """Layer ``layer`` of a latent-attention model on ``tokens`` (float64 numpy arrays):

    ``c_q [n, q_lora]`` (None without a q_lora rank), ``q_nope [h, n, nope]``, ``q_pe
    [h, n, rope]`` (after RoPE), ``c_kv [n, kv_lora]`` (the latent, normed: cached),
    ``k_pe [n, rope]`` (the shared rotary key after RoPE: cached), ``k_nope [h, n, nope]``
    and ``value [h, n, v_dim]`` (up-projected from ``c_kv``), ``query``/``key``
    ``[h, n, nope + rope]`` (what the scores read), the score factor ``scale`` and the bytes
    a token costs in this layer's cache: ``cached_bytes`` (latent + rotary key) against
    ``full_bytes`` (every head's key and value, as multi-head attention would cache them),
    at the run's 8 bytes a number."""

    tokens: tuple[str, ...]
    layer: int
    c_q: np.ndarray | None
    q_nope: np.ndarray
    q_pe: np.ndarray
    c_kv: np.ndarray
    k_pe: np.ndarray
    k_nope: np.ndarray
    value: np.ndarray
    query: np.ndarray
    key: np.ndarray
    scale: float
    cached_bytes: int
    full_bytes: int


def latent_view(model: str | os.PathLike | LoadedModel, text: str, layer: int = 0) -> LatentView:
    """The latent stages of layer ``layer`` reading ``text`` (see :class:`LatentView`); a
    ModelError for a model without latent attention or a layer out of range."""
    loaded = load_model(model)
    w = loaded.weights
    if w.latent is None:
        raise ModelError("layer", f"{loaded.name} ({w.family}) has no latent attention")
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
        raise ModelError("layer", f"layer must be a whole number, not {layer!r}")
    if not 0 <= layer < w.n_layers:
        raise ModelError(
            "layer", f"layer {layer} is out of range: {loaded.name} has layers 0..{w.n_layers - 1}"
        )
    toks = loaded.tokenize(text)
    h, _ = run_layers(w, toks.ids, toks.type_ids, int(layer))  # [n, d] float64
    view = layer_view(w, int(layer))
    s = latent_stages(numpy_ops, view, int(layer), attention_input(view, int(layer), h))
    plan, item = w.latent, np.dtype(np.float64).itemsize
    return LatentView(
        tokens=tuple(toks.tokens),
        layer=int(layer),
        c_q=s.c_q,
        q_nope=np.ascontiguousarray(s.q_nope),
        q_pe=s.q_pe,
        c_kv=s.c_kv,
        k_pe=s.k_pe,
        k_nope=np.ascontiguousarray(s.k_nope),
        value=np.ascontiguousarray(s.v),
        query=s.query(),
        key=s.key(),
        scale=float(w.scales[layer]),
        cached_bytes=plan.cache_width() * item,
        full_bytes=w.heads * (plan.qk_dim + plan.v_dim) * item,
    )
