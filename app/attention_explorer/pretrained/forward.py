"""The model's forward pass, written once against the architecture record
(:class:`~attention_explorer.pretrained.architecture.Architecture`): no code here asks which
family it is.

Post-norm (BERT)::

    h = norm(word[ids] + position[0..n) + token_type[type_ids])         # [n, d]
    a = attention(h);  h1 = norm(h + a);  h = norm(h1 + FFN(h1))         # per layer

Pre-norm (GPT-2, Llama)::

    h = word[ids] + position[0..n)                                      # [n, d]
    a = attention(norm_1(h));  h = h + a;  h = h + FFN(norm_2(h))       # per layer

Sandwich (Gemma 2/3) and output norms (OLMo 2, ``norm_placement="output"``)::

    h = h + norm_out(attention(norm_1(h)));  h = h + norm_out2(FFN(norm_2(h)))  # per layer

(each norm where the record names it), with ``FFN(x) = act(x W_in + b_in) W_out + b_out``
(``mlp``) or ``(act(x W_gate) * (x W_in)) W_out`` (``gated``), the norm a LayerNorm or an
RMSNorm. The attention's X is what :func:`attention_input` returns: exactly what layer L's
attention reads. Every function computes in the dtype of its input ``h`` (float32 or float64).

The same functions run numpy arrays or torch tensors: :func:`ops` gives the primitives (norms,
activations, linear, the output product) of the weights' ``library``
(:mod:`attention_explorer.kernels`); the attention block is :func:`.kernel.attend`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from types import ModuleType

import numpy as np

from attention_explorer.engine import AttentionConfig, Backend, compute
from attention_explorer.engine.blas_threads import one_blas_thread
from attention_explorer.kernels import ops_for
from attention_explorer.pretrained.architecture import scale_setting
from attention_explorer.pretrained.checkpoint.weights import LayerWeights, ModelWeights, Norm
from attention_explorer.pretrained.experts.compute import routed_feed_forward
from attention_explorer.pretrained.kernel import attend, soft_cap
from attention_explorer.pretrained.latent.session import latent_parts
from attention_explorer.pretrained.layer_parts import (
    direct_layer_parts,
    layer_view,
    mask_settings,
    unbridged,
    with_sinks,
)
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.rotary import direct_reason, rotary_parts


def ops(w: ModelWeights) -> ModuleType:
    """The primitives' namespace for ``w``'s arrays (:mod:`attention_explorer.kernels`):
    numpy's, or torch's when ``w.library`` is torch (imported, once, only then)."""
    return ops_for(w.library)


def norm(w: ModelWeights, x, pair: Norm):
    """The family's norm (``w.arch.norm``) with parameters ``pair`` = (gamma, beta)."""
    return ops(w).NORMS[w.arch.norm](x, pair[0], pair[1], w.eps)


def embed(w: ModelWeights, ids, type_ids, dtype=np.float64) -> np.ndarray:
    """The input of layer 0: token (+ position, + token type, then a norm if the family has
    one). ``[n, d]`` in ``dtype``."""
    h = w.word.rows(ids, dtype)  # [n, d]: only these rows are read and converted
    if w.position is not None:
        h += w.position[position_ids(w, ids)]  # [n, d]
    if w.token_type is not None:
        h += w.token_type[list(type_ids)]  # [n, d]
    if w.ln_embed is not None:
        h = norm(w, h, w.ln_embed)
    if w.embed_scale is not None:  # Gemma: x sqrt(d), the factor cast to the hidden dtype
        h = h * float(np.dtype(dtype).type(w.embed_scale))
    return h


def position_ids(w: ModelWeights, ids) -> np.ndarray:
    """The learned-position rows of ``ids``: 0..n-1, or RoBERTa's (``position_padding``):
    ``padding_idx + 1`` onwards counting non-pad tokens, a pad token at ``padding_idx``
    (transformers' ``create_position_ids_from_input_ids``). ``[n]``; a ModelError when the
    table is too short."""
    ids = np.asarray(ids, dtype=np.int64)  # [n]
    if w.arch.position_padding is None:
        where = np.arange(len(ids))  # [n]
    else:
        key, default = w.arch.position_padding
        pad = int(default if w.config.get(key) is None else w.config[key])
        real = ids != pad  # [n]
        where = np.cumsum(real) * real + pad  # [n]
    if len(where) and where.max() >= len(w.position):
        raise ModelError(
            "text",
            f"the text needs position {int(where.max())}, beyond the {len(w.position)} "
            "positions of the model's table",
        )
    return where


def attention_input(w: ModelWeights, layer: int, h: np.ndarray) -> np.ndarray:
    """What layer ``layer``'s attention reads from the hidden state ``h [n, d]``."""
    if w.arch.norm_placement == "pre":
        return norm(w, h, w.layers[layer].ln_attn)  # pre-norm: norm_1(h)
    return h  # post-norm or output norms: the hidden state itself


def attention_config(w: ModelWeights, layer: int) -> AttentionConfig:
    """The engine's settings for layer ``layer``: heads, d_k, kv heads, mask and scale."""
    scale, factor = scale_setting(w.scales[layer], w.d_k)
    return AttentionConfig(
        mode="projection",
        heads=w.heads,
        d_model=w.d_model,
        d_k=w.d_k,
        kv_heads=w.kv_heads if w.kv_heads != w.heads else None,
        mask="causal" if w.causal else "none",
        scale=scale,
        scale_factor=factor,
    )


def attention_parts(w: ModelWeights, layer: int, x: np.ndarray):
    """The engine's (config, inputs) for layer ``layer`` applied to ``x [n, d]``, with its own
    window and RoPE (:func:`.layer_parts.layer_view`): projection mode where the engine's
    settings reproduce the layer (rotary.py decides for RoPE and QK-norm), else direct mode
    with q and k exactly as the model run makes them; a ModelError for a layer no session
    reproduces (:func:`.layer_parts.unbridged`); a layer's attention sinks go with it
    (:func:`.layer_parts.with_sinks`)."""
    return with_sinks(w.layers[layer], _session_parts(w, layer, x))


def _session_parts(w: ModelWeights, layer: int, x: np.ndarray):
    """:func:`attention_parts` before the attention sinks."""
    why = unbridged(w, layer)
    if why:
        raise ModelError("layer", why)
    w = layer_view(w, layer)
    scale = scale_setting(w.scales[layer], w.d_k)
    if w.latent is not None:  # multi-head latent attention: Q, K, V per head (latent/)
        return latent_parts(w, layer, x, scale)
    rotary_or_norm = w.rope is not None or w.arch.qk_norm
    if rotary_or_norm and direct_reason(w):  # RoPE or QK-norm the engine cannot set
        return direct_layer_parts(w, layer, x, scale)
    if rotary_or_norm:
        return rotary_parts(w, layer, x, scale)
    config = attention_config(w, layer)
    if w.window is not None:  # a sliding layer without RoPE: its window as a custom mask
        config = replace(config, **mask_settings(w, x.shape[0]))
    if w.score_cap is not None:
        config = replace(config, softcap=w.score_cap)
    return config, w.layers[layer].projection_inputs(x)


def feed_forward(w: ModelWeights, lw: LayerWeights, x: np.ndarray) -> np.ndarray:
    """The feed-forward sublayer on ``x [n, d]``: ``[n, d]``; a routed-experts layer (its
    ``W_router`` set) runs :func:`.experts.compute.routed_feed_forward`."""
    if lw.W_router is not None:  # routed experts (pretrained/experts/)
        return routed_feed_forward(w, lw, x)
    o = ops(w)
    act = o.ACTIVATIONS[w.activation]
    if w.arch.mlp == "gated":
        inner = act(o.linear(x, lw.W_gate, lw.b_gate)) * o.linear(x, lw.W_in, lw.b_in)  # [n, d_ff]
    else:
        inner = act(o.linear(x, lw.W_in, lw.b_in))  # [n, d_ff]
    return o.linear(inner, lw.W_out, lw.b_out)  # [n, d]


def rest_of_layer(w: ModelWeights, layer: int, h: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The layer after its attention output ``a [n, d]``: residuals, norms, feed-forward."""
    lw = w.layers[layer]
    if w.parallel:  # GPT-NeoX, Phi, StableLM: both sublayers read the same h
        ln = lw.ln_attn if lw.ln_ffn is None else lw.ln_ffn  # Phi: one shared norm
        return h + a + feed_forward(w, lw, norm(w, h, ln))  # [n, d]
    if w.arch.norm_placement in ("pre", "output"):
        if lw.ln_attn_out is not None:  # Gemma 2's post_attention_layernorm, OLMo 2's
            a = norm(w, a, lw.ln_attn_out)
        h = h + a  # [n, d]
        f = feed_forward(w, lw, norm(w, h, lw.ln_ffn) if lw.ln_ffn is not None else h)
        if lw.ln_ffn_out is not None:  # post_feedforward_layernorm
            f = norm(w, f, lw.ln_ffn_out)
        return h + f  # [n, d]
    h1 = norm(w, h + a, lw.ln_attn)  # [n, d]
    return norm(w, h1 + feed_forward(w, lw, h1), lw.ln_ffn)


def output_logits(w: ModelWeights, h: np.ndarray) -> np.ndarray | None:
    """The output head on the last hidden state ``h [n, d]``: logits ``[n, vocab]``, or None
    when the checkpoint has no head (a sentence-embedding model such as MiniLM)."""
    head = w.head
    if head is None:
        return None
    if head.kind == "mlm":
        act = ops(w).ACTIVATIONS[w.arch.head_activation or w.activation]
        x = act(ops(w).linear(h, head.W_dense, head.b_dense))  # [n, d]
        x = norm(w, x, head.norm)  # [n, d]
    else:
        x = norm(w, h, head.norm) if head.norm is not None else h  # [n, d]
    logits = ops(w).logits(x, head.decoder)  # [n, vocab]
    if head.bias is not None:
        logits = logits + head.bias
    return logits if w.logit_cap is None else soft_cap(logits, w.logit_cap)  # Gemma 2


def run_layers(
    w: ModelWeights,
    ids,
    type_ids,
    stop: int,
    backend: Backend | None = None,
    keep_weights: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Run layers ``0 .. stop-1`` in float64; return the hidden state after them ``[n, d]``
    and, with ``keep_weights``, each layer's weights ``[heads, n, n]``. On numpy (``backend``
    None or numpy) the attention is the model run's kernel, so the hidden states are the
    float64 model run's to the bit; another backend runs the engine's ``compute()``.

    ``progress(done, stop)`` is called after each layer (for a progress bar).
    """
    weights: list[np.ndarray] = []
    stages = ("weights", "output") if keep_weights else ("output",)
    on_numpy = backend is None or backend.name == "numpy"
    with one_blas_thread():
        h = embed(w, ids, type_ids)
        for layer in range(stop):
            x = attention_input(w, layer, h)  # [n, d]
            if on_numpy or unbridged(w, layer):  # no session computes it: the kernel does
                p, a = attend(w, layer, x)  # [heads, n, n], [n, d]
            else:
                config, inputs = attention_parts(w, layer, x)
                trace = compute(inputs, config, backend, dtype="float64", stages=stages)
                p, a = trace.stages.get("weights"), trace.stages["output"]
            if keep_weights:
                weights.append(p)
            h = rest_of_layer(w, layer, h, a)
            if progress is not None:
                progress(layer + 1, stop)
    return h, weights
