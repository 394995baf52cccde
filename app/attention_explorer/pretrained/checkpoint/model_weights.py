"""The weights of a model as the forward pass reads them: one layer (:class:`LayerWeights`),
the output head (:class:`OutputHead`) and the whole model with the sizes and per-layer
settings read from config.json (:class:`ModelWeights`), all in math orientation
(``y = x W + b``). :mod:`~attention_explorer.pretrained.checkpoint.weights` reads them from a
checkpoint through the family's record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from attention_explorer.engine import AttentionInputs
from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.checkpoint.role_reader import Norm
from attention_explorer.pretrained.checkpoint.stored import StoredTable


@dataclass(frozen=True)
class LayerWeights:
    """One transformer layer. Attention: ``W_Q [d, h*d_k]``, ``W_K/W_V [d, kv*d_k]``,
    ``W_O [h*d_k, d]``, biases or None, QK-norm's ``q_norm``/``k_norm`` ``[d_k]`` or None.
    ``ln_attn``/``ln_ffn`` are (gamma, beta) pairs around the sublayers (where, the record's
    ``norm_placement`` says; None where the family has none), ``ln_attn_out``/``ln_ffn_out``
    the norms of the sublayers' outputs (Gemma 2, OLMo 2) or None. Feed-forward:
    ``W_in [d, d_ff]``, ``W_gate [d, d_ff]`` (gated only), ``W_out [d_ff, d]``.
    """

    W_Q: np.ndarray
    b_Q: np.ndarray | None
    W_K: np.ndarray
    b_K: np.ndarray | None
    W_V: np.ndarray
    b_V: np.ndarray | None
    W_O: np.ndarray
    b_O: np.ndarray | None
    ln_attn: Norm | None
    ln_ffn: Norm | None
    W_in: np.ndarray
    b_in: np.ndarray | None
    W_out: np.ndarray
    b_out: np.ndarray | None
    W_gate: np.ndarray | None = None
    b_gate: np.ndarray | None = None
    W_QKV: np.ndarray | None = None  # [d, h*d_k + 2 kv*d_k]: W_Q, W_K, W_V are views of it
    b_QKV: np.ndarray | None = None  # [h*d_k + 2 kv*d_k], when any of Q, K, V has a bias
    q_norm: np.ndarray | None = None  # [d_k] QK-norm's weight on each head's q, as stored
    k_norm: np.ndarray | None = None  # [d_k] the same on each head's k (OLMo 2: [h*d_k])
    ln_attn_out: Norm | None = None  # the norm of the attention's output (before the residual)
    ln_ffn_out: Norm | None = None  # the norm of the feed-forward's output
    sinks: np.ndarray | None = None  # [heads] attention sinks' logits (gpt-oss), or None
    # A mixture of experts (pretrained/experts/; W_in/W_out are None in its routed layers):
    W_router: np.ndarray | None = None  # [d, E] the router's logits x W_router + b_router
    b_router: np.ndarray | None = None  # [E] (gpt-oss)
    router_score_bias: np.ndarray | None = None  # [E] added for the choice only (DeepSeek-V3)
    W_experts_gate: np.ndarray | None = None  # [E, d, f]
    b_experts_gate: np.ndarray | None = None  # [E, f] (gpt-oss)
    W_experts_in: np.ndarray | None = None  # [E, d, f] the experts' up projections
    b_experts_in: np.ndarray | None = None  # [E, f]
    W_experts_out: np.ndarray | None = None  # [E, f, d] the experts' down projections
    b_experts_out: np.ndarray | None = None  # [E, d]
    W_shared_gate: np.ndarray | None = None  # [d, S f] shared experts (DeepSeek-V3)
    W_shared_in: np.ndarray | None = None  # [d, S f]
    W_shared_out: np.ndarray | None = None  # [S f, d]

    # Multi-head latent attention (pretrained/latent/; W_K, W_V are None, W_Q is q_proj
    # without a q_lora rank):
    W_q_a: np.ndarray | None = None  # [d, q_lora]
    b_q_a: np.ndarray | None = None  # [q_lora] (attention_bias)
    q_a_norm: np.ndarray | None = None  # [q_lora] RMSNorm weight
    W_q_b: np.ndarray | None = None  # [q_lora, h*(nope+rope)]
    W_kv_a: np.ndarray | None = None  # [d, kv_lora + rope]: the latent and the rotary key
    b_kv_a: np.ndarray | None = None  # [kv_lora + rope] (attention_bias)
    kv_a_norm: np.ndarray | None = None  # [kv_lora] RMSNorm weight
    W_kv_b: np.ndarray | None = None  # [kv_lora, h*(nope+v)]: k_nope and v per head

    def projection_inputs(self, x: np.ndarray) -> AttentionInputs:
        """The engine's projection-mode inputs of this layer's attention on ``x [n, d]``."""
        names = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
        return AttentionInputs(X=x, **{name: getattr(self, name) for name in names})


@dataclass(frozen=True)
class OutputHead:
    """How the last hidden state becomes logits ``[n, vocab]``.

    ``lm``: ``norm(h) @ decoder.T`` (GPT-2: ln_f and the tied word table).
    ``mlm``: ``LN(act(h W_dense + b_dense)) @ decoder.T + bias`` (BERT's prediction head).
    ``decoder`` is the ``[vocab, d]`` table left in the checkpoint (read a block at a time);
    tied to the word embeddings, it is the same object as ``ModelWeights.word``.
    """

    kind: str  # "lm" | "mlm"
    decoder: StoredTable  # [vocab, d]
    bias: np.ndarray | None  # [vocab]
    norm: Norm | None  # final norm (lm) or the head's LayerNorm (mlm)
    W_dense: np.ndarray | None = None  # [d, d] (mlm)
    b_dense: np.ndarray | None = None  # [d] (mlm)


@dataclass(frozen=True)
class ModelWeights:
    """Everything the forward pass needs, in ``dtype`` (float64 by default), plus the sizes
    read from config.json. ``layers`` are read from the checkpoint and converted when a run
    reaches them (:class:`~attention_explorer.pretrained.checkpoint.stored.StoredLayers`);
    ``word`` stays in the checkpoint and rows are converted when looked up."""

    name: str
    arch: Architecture
    config: Mapping  # config.json (with the model RoPE's keys where layers read others)
    heads: int
    kv_heads: int
    d_model: int
    d_k: int
    max_positions: int
    eps: float
    activation: str  # a key of ACTIVATIONS
    causal: bool
    scales: tuple[float, ...]  # the score factor of each layer
    word: StoredTable  # [vocab, d], left in the checkpoint (rows converted when looked up)
    position: np.ndarray | None  # [max_positions, d]
    token_type: np.ndarray | None  # [types, d] (BERT)
    ln_embed: Norm | None  # BERT's embedding LayerNorm
    layers: Sequence[LayerWeights]  # converted on first use (see StoredLayers)
    head: OutputHead | None = None
    rope: np.ndarray | None = None  # [r/2] RoPE inverse frequencies (rotary; short texts)
    rotary: object | None = None  # RoPE as the run applies it (scaling, partial rotary)
    parallel: bool = False  # parallel residual: h + attn(norm_1 h) + ffn(norm_2 h)
    window: int | None = None  # sliding window: keys this many positions back are hidden
    kinds: tuple = ()  # [layers] each layer's LayerKind: window, RoPE keys (empty: alike)
    rotaries: tuple = ()  # [layers] each layer's RotaryPlan, None: no RoPE (empty: ``rotary``)
    score_cap: float | None = None  # scores -> cap * tanh(scores / cap) before the mask
    logit_cap: float | None = None  # logits -> cap * tanh(logits / cap)
    embed_scale: float | None = None  # the embeddings' multiplier (cast to the run's dtype)
    latent: object | None = None  # multi-head latent attention's LatentPlan (ranks), or None
    dtype: str = "float64"  # the dtype of every converted weight
    library: str = "numpy"  # "torch" when every array is a tensor (torch_weights.on_torch)
    stored: object | None = field(default=None, compare=False, repr=False)  # weights._Stored

    @property
    def family(self) -> str:
        """The family's registry key (``bert``, ``gpt2``…)."""
        return self.arch.family

    def window_of(self, layer: int) -> int | None:
        """Layer ``layer``'s sliding window (None: every earlier key is seen)."""
        return self.kinds[layer].window if self.kinds else self.window

    def rotary_of(self, layer: int):
        """Layer ``layer``'s RoPE (a RotaryPlan), None when its q and k are not rotated."""
        return self.rotaries[layer] if self.rotaries else self.rotary

    @property
    def n_layers(self) -> int:
        """Number of transformer layers."""
        return len(self.layers)

    @property
    def vocab(self) -> int:
        """Rows of the word table."""
        return int(self.word.shape[0])
