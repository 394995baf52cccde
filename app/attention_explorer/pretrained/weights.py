"""A model's weights in math orientation (``y = x W + b``), read from a Hugging Face folder
through its family's :class:`~attention_explorer.pretrained.architecture.Architecture` record.

Nothing here names a family: the record maps roles (``W_Q`` of layer i, the word table, the
final norm…) to checkpoint tensor names, says whether linear weights are stored ``[out, in]``
(``nn.Linear``, transposed here) or ``[in, out]`` (``Conv1D``), and which config keys it reads
and refuses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_explorer.engine import AttentionInputs
from attention_explorer.pretrained.activations import ACTIVATIONS
from attention_explorer.pretrained.architecture import Architecture, check_config
from attention_explorer.pretrained.errors import ModelError
from attention_explorer.pretrained.families import SUPPORTED_TEXT, architecture_for
from attention_explorer.pretrained.rotary import rope_frequencies
from attention_explorer.pretrained.tensor_file import TensorFile
from attention_explorer.pretrained.validate import check_config_values, check_shape

__all__ = ["SUPPORTED_TEXT", "LayerWeights", "ModelWeights", "OutputHead", "read_weights"]

Norm = tuple[np.ndarray, "np.ndarray | None"]  # (gamma [d], beta [d] or None for RMSNorm)


@dataclass(frozen=True)
class LayerWeights:
    """One transformer layer. Attention: ``W_Q [d, h*d_k]``, ``W_K/W_V [d, kv*d_k]``,
    ``W_O [h*d_k, d]``, biases or None. ``ln_attn``/``ln_ffn`` are (gamma, beta) pairs around
    the sublayers (where, the record's ``norm_placement`` says). Feed-forward:
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
    ln_attn: Norm
    ln_ffn: Norm
    W_in: np.ndarray
    b_in: np.ndarray | None
    W_out: np.ndarray
    b_out: np.ndarray | None
    W_gate: np.ndarray | None = None
    b_gate: np.ndarray | None = None

    def projection_inputs(self, x: np.ndarray) -> AttentionInputs:
        """The engine's projection-mode inputs of this layer's attention on ``x [n, d]``."""
        names = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
        return AttentionInputs(X=x, **{name: getattr(self, name) for name in names})


@dataclass(frozen=True)
class OutputHead:
    """How the last hidden state becomes logits ``[n, vocab]``.

    ``lm``: ``norm(h) @ decoder.T`` (GPT-2: ln_f and the tied word table).
    ``mlm``: ``LN(act(h W_dense + b_dense)) @ decoder.T + bias`` (BERT's prediction head).
    ``decoder`` is ``[vocab, d]`` as stored (cast when used).
    """

    kind: str  # "lm" | "mlm"
    decoder: np.ndarray  # [vocab, d]
    bias: np.ndarray | None  # [vocab]
    norm: Norm | None  # final norm (lm) or the head's LayerNorm (mlm)
    W_dense: np.ndarray | None = None  # [d, d] (mlm)
    b_dense: np.ndarray | None = None  # [d] (mlm)


@dataclass(frozen=True)
class ModelWeights:
    """Everything the forward pass needs, float64, plus the sizes read from config.json."""

    name: str
    arch: Architecture
    config: Mapping
    heads: int
    kv_heads: int
    d_model: int
    d_k: int
    max_positions: int
    eps: float
    activation: str  # a key of ACTIVATIONS
    causal: bool
    scales: tuple[float, ...]  # the score factor of each layer
    word: np.ndarray  # [vocab, d], as stored (rows are cast when looked up)
    position: np.ndarray | None  # [max_positions, d]
    token_type: np.ndarray | None  # [types, d] (BERT)
    ln_embed: Norm | None  # BERT's embedding LayerNorm
    layers: tuple[LayerWeights, ...]
    head: OutputHead | None = None
    rope: np.ndarray | None = None  # [d_k/2] RoPE inverse frequencies (rotary families)
    window: int | None = None  # sliding window: keys this many positions back are hidden

    @property
    def family(self) -> str:
        """The family's registry key (``bert``, ``gpt2``…)."""
        return self.arch.family

    @property
    def n_layers(self) -> int:
        """Number of transformer layers."""
        return len(self.layers)

    @property
    def vocab(self) -> int:
        """Rows of the word table."""
        return int(self.word.shape[0])


def read_config(folder: Path) -> dict:
    """config.json as a dict, or a ModelError naming the file."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError("files", f"{folder / 'config.json'} cannot be read: {exc}") from None
    if not isinstance(config, dict):
        raise ModelError("files", f"{folder / 'config.json'} is not a JSON object")
    return config


def family_of(config: dict) -> str:
    """The family key of a config, or a ModelError naming the supported architectures."""
    return architecture_for(config).family


class _Reader:
    """Tensors by role, for one architecture: names, prefixes, orientation, norms."""

    def __init__(self, arch: Architecture, tensors: TensorFile):
        self.arch, self.t = arch, tensors

    def name(self, role: str, i: int | None = None) -> str | None:
        pattern = self.arch.tensors.get(role)
        return None if pattern is None else pattern.format(i=i)

    def has(self, role: str, i: int | None = None, suffix: str = "") -> bool:
        name = self.name(role, i)
        return name is not None and self.t.find(name + suffix, self.arch.prefixes) is not None

    def get(self, name: str, convert: bool = True, shape: tuple = ()) -> np.ndarray:
        """Tensor ``name`` (float64 with ``convert``), its stored shape checked if given."""
        key = self.t.find(name, self.arch.prefixes)
        if key is None:
            raise ModelError("files", f"{self.t.describe()} has no weight named {name!r}")
        if shape:
            check_shape(self.t.describe(), key, self.t.info(key)[1], shape)
        return self.t.get(key, np.float64 if convert else None)

    def table(self, role: str, convert: bool = True, shape: tuple = ()) -> np.ndarray | None:
        name = self.name(role)
        return None if name is None else self.get(name, convert, shape)

    def linear(self, role: str, i: int | None, d_in: int | None, d_out: int | None):
        """(W [in, out], b [out] or None). A transpose is a view: no copy."""
        name = self.name(role, i)
        out_in = self.arch.linear_layout == "out_in"
        w = self.get(name + ".weight", shape=(d_out, d_in) if out_in else (d_in, d_out))
        w = w.T if out_in else w
        bias = self.get(name + ".bias", shape=(d_out,)) if self.has(role, i, ".bias") else None
        return w, bias

    def norm(self, role: str, i: int | None, d: int) -> Norm | None:
        name = self.name(role, i)
        if name is None:
            return None
        if self.has(role, i, ".gamma"):
            return self.get(name + ".gamma", shape=(d,)), self.get(name + ".beta", shape=(d,))
        bias = self.get(name + ".bias", shape=(d,)) if self.has(role, i, ".bias") else None
        return self.get(name + ".weight", shape=(d,)), bias


def _attention(r: _Reader, i: int, d: int, d_q: int, d_kv: int) -> dict:
    if "qkv" in r.arch.tensors:
        W, b = r.linear("qkv", i, d, d_q + 2 * d_kv)  # [d, d_q + 2 d_kv], [d_q + 2 d_kv]
        cuts = (0, d_q, d_q + d_kv, d_q + 2 * d_kv)
        parts = {}
        for name, lo, hi in zip("QKV", cuts, cuts[1:]):
            parts["W_" + name] = W[:, lo:hi].copy()
            parts["b_" + name] = None if b is None else b[lo:hi].copy()
        return parts
    parts = {}
    for name, role, width in (("Q", "q", d_q), ("K", "k", d_kv), ("V", "v", d_kv)):
        parts["W_" + name], parts["b_" + name] = r.linear(role, i, d, width)
    return parts


def _layer(r: _Reader, i: int, sizes: dict, d_q: int, d_kv: int) -> LayerWeights:
    d, d_ff = sizes["d_model"], sizes.get("d_ff")  # d_ff None: any width (GPT-2's 4 d)
    W_O, b_O = r.linear("o", i, d_q, d)
    W_in, b_in = r.linear("ffn_in", i, d, d_ff)
    d_ff = W_in.shape[1]
    W_out, b_out = r.linear("ffn_out", i, d_ff, d)
    gated = r.arch.mlp == "gated"
    W_gate, b_gate = r.linear("ffn_gate", i, d, d_ff) if gated else (None, None)
    return LayerWeights(
        **_attention(r, i, d, d_q, d_kv),
        W_O=W_O,
        b_O=b_O,
        ln_attn=r.norm("attn_norm", i, d),
        ln_ffn=r.norm("ffn_norm", i, d),
        W_in=W_in,
        b_in=b_in,
        W_out=W_out,
        b_out=b_out,
        W_gate=W_gate,
        b_gate=b_gate,
    )


def _head(r: _Reader, word: np.ndarray, d: int) -> OutputHead | None:
    kind, rows = r.arch.head, word.shape[0]
    if kind == "lm":
        decoder = r.table("lm_head", False, (rows, d)) if r.has("lm_head") else word
        return OutputHead("lm", decoder, None, r.norm("final_norm", None, d))
    if kind == "mlm" and r.has("mlm_dense", None, ".weight"):
        W, b = r.linear("mlm_dense", None, d, d)
        decoder = r.table("mlm_decoder", False, (rows, d)) if r.has("mlm_decoder") else word
        bias = r.table("mlm_bias", shape=(rows,))
        return OutputHead("mlm", decoder, bias, r.norm("mlm_norm", None, d), W, b)
    return None


def _build(arch: Architecture, cfg: dict, r: _Reader, name: str) -> ModelWeights:
    check_config(arch, cfg, ACTIVATIONS)
    sizes = check_config_values(arch, cfg, r.t.folder / "config.json")
    heads, d = sizes["heads"], sizes["d_model"]
    kv_heads = sizes.get("kv_heads") or heads
    d_k = sizes.get("head_dim") or d // heads
    n_layers, max_positions = sizes["layers"], sizes["max_positions"]
    word = r.table("word", False, (None, d))
    learned = arch.positions == "learned"
    return ModelWeights(
        name=name,
        arch=arch,
        config=dict(cfg),
        heads=heads,
        kv_heads=kv_heads,
        d_model=d,
        d_k=d_k,
        max_positions=max_positions,
        eps=arch.eps(cfg),
        activation=arch.activation(cfg),
        causal=arch.is_causal(cfg),
        scales=tuple(arch.scale_rule(cfg, i, d_k) for i in range(n_layers)),
        word=word,
        position=r.table("position", shape=(max_positions, d)) if learned else None,
        token_type=r.table("token_type", shape=(None, d)),
        ln_embed=r.norm("embed_norm", None, d),
        layers=tuple(_layer(r, i, sizes, heads * d_k, kv_heads * d_k) for i in range(n_layers)),
        head=_head(r, word, d),
        rope=rope_frequencies(cfg, d_k) if arch.positions == "rotary" else None,
        window=_window(arch, cfg),
    )


def _window(arch: Architecture, cfg: dict) -> int | None:
    value = cfg.get(arch.window_key) if arch.window_key else None
    return None if value is None else int(value)


def read_weights(folder: Path, name: str) -> ModelWeights:
    """The model in ``folder`` (config.json + safetensors) as float64 weights."""
    cfg = read_config(folder)
    arch = architecture_for(cfg)
    try:
        return _build(arch, cfg, _Reader(arch, TensorFile.open(folder)), name)
    except ModelError:
        raise
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise ModelError(
            "files", f"{folder / 'config.json'} lacks a needed setting: {exc}"
        ) from None
