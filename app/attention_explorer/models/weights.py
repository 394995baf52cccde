"""A model's weights in math orientation (``y = x W + b``), read from a Hugging Face folder.

Two families are supported:

- BERT-style encoders (BERT, MiniLM): post-LayerNorm, exact (erf) GELU, ``nn.Linear``
  weights stored ``[out, in]`` and transposed here; keys with or without a ``bert.`` prefix.
- GPT-2-style decoders: pre-LayerNorm, tanh GELU, ``Conv1D`` weights already ``[in, out]``;
  keys with or without a ``transformer.`` prefix; Q, K and V come fused in ``c_attn``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_explorer.models.errors import ModelError, require_extra

#: model_type values this reader understands, and the family each belongs to.
FAMILIES = {"bert": "bert", "gpt2": "gpt2"}
#: What an unsupported-architecture message lists.
SUPPORTED_TEXT = "BERT-style encoders (bert: BERT, MiniLM) and GPT-2-style decoders (gpt2)"


@dataclass(frozen=True)
class LayerWeights:
    """One transformer layer. Attention: ``W_Q/W_K/W_V [d, d]``, ``W_O [d, d]``, biases ``[d]``.

    ``ln_attn``/``ln_ffn`` are (gamma, beta) pairs: after the sublayer in BERT (post-LN),
    before it in GPT-2 (pre-LN). Feed-forward: ``W_in [d, d_ff]``, ``W_out [d_ff, d]``.
    """

    W_Q: np.ndarray
    b_Q: np.ndarray
    W_K: np.ndarray
    b_K: np.ndarray
    W_V: np.ndarray
    b_V: np.ndarray
    W_O: np.ndarray
    b_O: np.ndarray
    ln_attn: tuple[np.ndarray, np.ndarray]
    ln_ffn: tuple[np.ndarray, np.ndarray]
    W_in: np.ndarray
    b_in: np.ndarray
    W_out: np.ndarray
    b_out: np.ndarray


@dataclass(frozen=True)
class ModelWeights:
    """Everything the forward pass needs, float64, plus the sizes from config.json."""

    name: str
    family: str  # "bert" | "gpt2"
    heads: int
    d_model: int
    max_positions: int
    eps: float
    activation: str  # "gelu" (erf) | "gelu_tanh"
    word: np.ndarray  # [vocab, d], as stored (rows are cast to float64 when looked up)
    position: np.ndarray  # [max_positions, d]
    token_type: np.ndarray | None  # [types, d] (BERT)
    ln_embed: tuple[np.ndarray, np.ndarray] | None  # BERT's embedding LayerNorm
    layers: tuple[LayerWeights, ...]

    @property
    def n_layers(self) -> int:
        """Number of transformer layers."""
        return len(self.layers)

    @property
    def causal(self) -> bool:
        """True for decoders, whose queries see only earlier tokens."""
        return self.family == "gpt2"


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
    """'bert' or 'gpt2', or a ModelError naming the supported architectures."""
    kind = str(config.get("model_type", "")).lower()
    if kind in FAMILIES:
        return FAMILIES[kind]
    arch = ", ".join(config.get("architectures") or []) or kind or "unknown"
    raise ModelError(
        "architecture", f"the architecture {arch} is not supported; supported: {SUPPORTED_TEXT}"
    )


class _Tensors:
    """The safetensors file as float64 arrays, found by key with or without a prefix."""

    def __init__(self, folder: Path, prefixes: tuple[str, ...]):
        st = require_extra("safetensors.numpy")
        try:
            self.raw = st.load_file(str(folder / "model.safetensors"))
        except Exception as exc:
            raise ModelError(
                "files", f"{folder / 'model.safetensors'} cannot be read: {exc}"
            ) from None
        self.prefixes = prefixes
        self.file = folder / "model.safetensors"

    def __call__(self, key: str, transpose: bool = False, convert: bool = True) -> np.ndarray:
        """The tensor ``key`` as float64 (``convert``), transposed to ``[in, out]`` if asked.

        A transpose is a view: BLAS multiplies Fortran-ordered matrices without a copy.
        """
        for prefix in self.prefixes:
            if prefix + key in self.raw:
                value = self.raw[prefix + key]
                value = np.asarray(value, dtype=np.float64) if convert else value
                return value.T if transpose else value
        raise ModelError("files", f"{self.file} has no weight named {key!r}")

    def pair(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """A LayerNorm's (gamma, beta), under weight/bias or the old gamma/beta names."""
        try:
            return self(f"{key}.weight"), self(f"{key}.bias")
        except ModelError:
            return self(f"{key}.gamma"), self(f"{key}.beta")


def _bert(cfg: dict, t: _Tensors, name: str) -> ModelWeights:
    if cfg.get("position_embedding_type", "absolute") != "absolute":
        raise ModelError("architecture", "only BERT models with absolute positions are supported")
    act = str(cfg.get("hidden_act", "gelu"))
    if act not in ("gelu", "gelu_new", "gelu_pytorch_tanh"):
        raise ModelError("architecture", f"the activation {act!r} is not supported (gelu only)")
    layers = []
    for i in range(int(cfg["num_hidden_layers"])):
        p = f"encoder.layer.{i}."
        layers.append(
            LayerWeights(
                W_Q=t(p + "attention.self.query.weight", True),
                b_Q=t(p + "attention.self.query.bias"),
                W_K=t(p + "attention.self.key.weight", True),
                b_K=t(p + "attention.self.key.bias"),
                W_V=t(p + "attention.self.value.weight", True),
                b_V=t(p + "attention.self.value.bias"),
                W_O=t(p + "attention.output.dense.weight", True),
                b_O=t(p + "attention.output.dense.bias"),
                ln_attn=t.pair(p + "attention.output.LayerNorm"),
                ln_ffn=t.pair(p + "output.LayerNorm"),
                W_in=t(p + "intermediate.dense.weight", True),
                b_in=t(p + "intermediate.dense.bias"),
                W_out=t(p + "output.dense.weight", True),
                b_out=t(p + "output.dense.bias"),
            )
        )
    return ModelWeights(
        name=name,
        family="bert",
        heads=int(cfg["num_attention_heads"]),
        d_model=int(cfg["hidden_size"]),
        max_positions=int(cfg.get("max_position_embeddings", 512)),
        eps=float(cfg.get("layer_norm_eps", 1e-12)),
        activation="gelu" if act == "gelu" else "gelu_tanh",
        word=t("embeddings.word_embeddings.weight", convert=False),
        position=t("embeddings.position_embeddings.weight"),
        token_type=t("embeddings.token_type_embeddings.weight"),
        ln_embed=t.pair("embeddings.LayerNorm"),
        layers=tuple(layers),
    )


def _gpt2(cfg: dict, t: _Tensors, name: str) -> ModelWeights:
    d = int(cfg.get("n_embd", 768))
    layers = []
    for i in range(int(cfg.get("n_layer", 12))):
        p = f"h.{i}."
        W_qkv, b_qkv = t(p + "attn.c_attn.weight"), t(p + "attn.c_attn.bias")  # [d, 3d], [3d]
        layers.append(
            LayerWeights(
                W_Q=W_qkv[:, :d].copy(),
                b_Q=b_qkv[:d].copy(),
                W_K=W_qkv[:, d : 2 * d].copy(),
                b_K=b_qkv[d : 2 * d].copy(),
                W_V=W_qkv[:, 2 * d :].copy(),
                b_V=b_qkv[2 * d :].copy(),
                W_O=t(p + "attn.c_proj.weight"),
                b_O=t(p + "attn.c_proj.bias"),
                ln_attn=t.pair(p + "ln_1"),
                ln_ffn=t.pair(p + "ln_2"),
                W_in=t(p + "mlp.c_fc.weight"),
                b_in=t(p + "mlp.c_fc.bias"),
                W_out=t(p + "mlp.c_proj.weight"),
                b_out=t(p + "mlp.c_proj.bias"),
            )
        )
    return ModelWeights(
        name=name,
        family="gpt2",
        heads=int(cfg.get("n_head", 12)),
        d_model=d,
        max_positions=int(cfg.get("n_positions", 1024)),
        eps=float(cfg.get("layer_norm_epsilon", 1e-5)),
        activation="gelu_tanh",
        word=t("wte.weight", convert=False),
        position=t("wpe.weight"),
        token_type=None,
        ln_embed=None,
        layers=tuple(layers),
    )


def read_weights(folder: Path, name: str) -> ModelWeights:
    """The model in ``folder`` (config.json + model.safetensors) as float64 weights."""
    cfg = read_config(folder)
    family = family_of(cfg)
    try:
        if family == "bert":
            return _bert(cfg, _Tensors(folder, ("", "bert.", "model.")), name)
        return _gpt2(cfg, _Tensors(folder, ("", "transformer.")), name)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ModelError):
            raise
        raise ModelError(
            "files", f"{folder / 'config.json'} lacks a needed setting: {exc}"
        ) from None
