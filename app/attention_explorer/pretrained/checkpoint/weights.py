"""A model's weights in math orientation (``y = x W + b``), read from a Hugging Face folder
through its family's :class:`~attention_explorer.pretrained.architecture.Architecture` record.

Nothing here names a family: the record maps roles (``W_Q`` of layer i, the word table, the
final norm…) to checkpoint tensor names, says whether linear weights are stored ``[out, in]``
(``nn.Linear``, handed on as a transposed view: BLAS reads it so, with no copy) or
``[in, out]`` (``Conv1D``), and which config keys it reads and refuses.

The records themselves (:class:`LayerWeights`, :class:`OutputHead`, :class:`ModelWeights`)
live in :mod:`~attention_explorer.pretrained.checkpoint.model_weights` and are re-exported here.

Loading reads headers only: every layer's tensors are found and their shapes checked, the
memory a run needs is compared with what the machine has, and the layers are then converted to
the run's dtype (float32, or float64 for parity) when a run reaches them
(:mod:`~attention_explorer.pretrained.checkpoint.stored`). ``in_dtype`` gives the same model in
another dtype, sharing the word table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_explorer.kernels.numpy_ops import ACTIVATIONS
from attention_explorer.pretrained.architecture import Architecture, check_config
from attention_explorer.pretrained.checkpoint import stored as storage
from attention_explorer.pretrained.checkpoint.fused_layouts import fused_qkv, gate_up
from attention_explorer.pretrained.checkpoint.model_weights import (
    LayerWeights,
    ModelWeights,
    OutputHead,
)
from attention_explorer.pretrained.checkpoint.role_reader import Norm, RoleReader
from attention_explorer.pretrained.checkpoint.stored import StoredTable
from attention_explorer.pretrained.checkpoint.tensor_file import TensorFile
from attention_explorer.pretrained.checkpoint.validate import check_config_values
from attention_explorer.pretrained.experts.reading import dense_layer_check, expert_weights
from attention_explorer.pretrained.families import SUPPORTED_TEXT, architecture_for
from attention_explorer.pretrained.latent.plan import latent_plan
from attention_explorer.pretrained.latent.reader import read_latent
from attention_explorer.pretrained.layer_plan import ModelSettings, model_settings
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.rope_plan import RotaryPlan, rotary_plan

__all__ = [
    "SUPPORTED_TEXT",
    "LayerWeights",
    "Norm",
    "ModelWeights",
    "OutputHead",
    "in_dtype",
    "read_weights",
]


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


def _attention(r: RoleReader, i: int, d: int, d_q: int, d_kv: int) -> dict:
    """W_Q, W_K, W_V and their biases; when the layers are kept (``r.rows``) also the fused
    ``W_QKV [d, d_q + 2 d_kv]`` and ``b_QKV``, of which the three are views (one product
    instead of three: 0.5 ms less a layer at 256 tokens on 2 cores)."""
    if "qkv" in r.arch.tensors:
        W, b = r.linear("qkv", i, d, d_q + 2 * d_kv)  # [d, d_q + 2 d_kv], [d_q + 2 d_kv]
        heads, _, d_k = _head_sizes(r.sizes)
        W, b = fused_qkv(W, b, r.arch.qkv_layout, heads, d_k, r.dry)  # q, k, v in blocks
    else:
        pairs = [r.linear(role, i, d, width) for role, width in zip("qkv", (d_q, d_kv, d_kv))]
        if not r.rows:  # converted for one run: the three as read
            return {
                key: value
                for n, pair in zip("QKV", pairs)
                for key, value in zip((f"W_{n}", f"b_{n}"), pair)
            }
        W = np.concatenate([weight for weight, _ in pairs], axis=1)  # [d, d_q + 2 d_kv]
        widths = (d_q, d_kv, d_kv)
        biases = [
            np.zeros(k, r.dtype) if bias is None else bias for k, (_, bias) in zip(widths, pairs)
        ]
        b = None if all(bias is None for _, bias in pairs) else np.concatenate(biases)
    cuts = (0, d_q, d_q + d_kv, d_q + 2 * d_kv)
    parts = {"W_QKV": W, "b_QKV": b} if r.rows else {}
    for name, lo, hi in zip("QKV", cuts, cuts[1:]):  # views of the fused product when kept
        parts["W_" + name] = W[:, lo:hi] if r.rows else W[:, lo:hi].copy()
        parts["b_" + name] = None if b is None else b[lo:hi] if r.rows else b[lo:hi].copy()
    return parts


#: Why a parallel layer with one shared norm has no feed-forward norm.
_SHARED = "the config's parallel residual shares the attention's norm with the feed-forward"


def _dense_ffn(r: RoleReader, i: int, d: int, d_ff: int | None) -> dict:
    """The dense feed-forward's W_in, W_out, W_gate and biases of layer ``i``."""
    W_gate, b_gate = None, None
    if "ffn_gate_up" in r.arch.tensors:  # fused gate and up projections (Phi-3)
        W, b = r.linear("ffn_gate_up", i, d, None if d_ff is None else 2 * d_ff)
        (W_gate, b_gate), (W_in, b_in) = gate_up(W, b, W.shape[1] // 2, r.rows)
    else:
        W_in, b_in = r.linear("ffn_in", i, d, d_ff)
    d_ff = W_in.shape[1]
    W_out, b_out = r.linear("ffn_out", i, d_ff, d)
    if r.arch.mlp == "gated" and W_gate is None:
        W_gate, b_gate = r.linear("ffn_gate", i, d, d_ff)
    names = ("W_in", "b_in", "W_out", "b_out", "W_gate", "b_gate")
    return dict(zip(names, (W_in, b_in, W_out, b_out, W_gate, b_gate)))


def _layer(r: RoleReader, i: int, sizes: dict, d_q: int, d_kv: int) -> LayerWeights:
    d, d_ff = sizes["d_model"], sizes.get("d_ff")  # d_ff None: any width (GPT-2's 4 d)
    d_k = _head_sizes(sizes)[2]
    r.no_foreign_norms(i)
    W_O, b_O = r.linear("o", i, d_q, d)
    experts = r.arch.experts
    if experts is not None and experts.is_sparse(r.config, i):  # routed experts
        ffn = {"W_in": None, "b_in": None, "W_out": None, "b_out": None}
        ffn.update(expert_weights(r, i, d))
    else:
        if experts is not None:  # a dense layer of a model with experts: no router
            dense_layer_check(r, i)
        ffn = _dense_ffn(r, i, d, d_ff)
    shared = r.arch.parallel(r.config) and r.arch.parallel_norm == "shared"
    if r.arch.latent:  # multi-head latent attention (pretrained/latent/)
        attention = read_latent(r, i, d, sizes["heads"], latent_plan(r.arch, r.config, sizes))
    else:
        attention = _attention(r, i, d, d_q, d_kv)
    return LayerWeights(
        **attention,
        W_O=W_O,
        b_O=b_O,
        ln_attn=r.norm("attn_norm", i, d),
        ln_attn_out=r.norm("attn_out_norm", i, d),
        ln_ffn_out=r.norm("ffn_out_norm", i, d),
        ln_ffn=r.absent("ffn_norm", i, _SHARED) if shared else r.norm("ffn_norm", i, d),
        **ffn,
        **r.qk_norms(i, *((d_q, d_kv) if r.arch.qk_norm_over == "all" else (d_k,) * 2)),
        sinks=r.sinks(i, d_q // d_k),  # [heads] attention sinks (gpt-oss), else None
    )


def _head(r: RoleReader, word: StoredTable, d: int) -> OutputHead | None:
    """The output head as transformers builds it: an untied table (``lm_head``, BERT's
    decoder) when the file has one, else the word table when ``tie_word_embeddings``; a base
    model (a ``LlamaModel``, untied, no ``lm_head``) has no head. BERT's bias is the decoder's
    own (``cls.predictions.decoder.bias``), ``cls.predictions.bias`` only when tied and the
    decoder's is absent (transformers ties the two then, and unties them when both are stored
    with different values)."""
    kind, rows, tied = r.arch.head, word.shape[0], r.arch.ties(r.config)
    if kind == "lm":
        bias = _head_bias(r, rows)
        decoder = r.table("lm_head", (rows, d)) if r.has("lm_head") else word if tied else None
        if decoder is None:  # a base model: no output weights to make logits from
            return None
        return OutputHead("lm", decoder, bias, r.norm("final_norm", None, d))
    if kind == "mlm" and r.has("mlm_dense", None, ".weight"):
        W, b = r.linear("mlm_dense", None, d, d)
        decoder = r.table("mlm_decoder", (rows, d)) if r.has("mlm_decoder") else word
        if not tied:
            _untied_needs(r, ("mlm_decoder", "mlm_decoder_bias"))
        role = "mlm_decoder_bias" if r.has("mlm_decoder_bias") else "mlm_bias"
        bias = r.small(role, shape=(rows,))  # [vocab]
        return OutputHead("mlm", decoder, bias, r.norm("mlm_norm", None, d), W, b)
    return None


def _head_bias(r: RoleReader, rows: int) -> np.ndarray | None:
    """The LM head's bias ``[vocab]`` where the family has one (Phi's ``lm_head.bias``,
    required), else None after :func:`_no_head_bias`."""
    if not r.arch.head_bias:
        _no_head_bias(r)
        return None
    return r.get(r.name("lm_head").removesuffix(".weight") + ".bias", shape=(rows,))


def _no_head_bias(r: RoleReader) -> None:
    """An LM head has no bias (transformers builds ``lm_head`` with ``bias=False`` and would
    drop one): a checkpoint that has one is refused naming it."""
    stored = r.t.find(r.name("lm_head").removesuffix(".weight") + ".bias", r.arch.prefixes)
    if stored is not None:
        raise ModelError(
            "files",
            f"{r.t.describe()}: tensor {stored} is present, but {r.arch.label} have no output "
            "bias (transformers would drop it): the weights are not this family's",
        )


def _untied_needs(r: RoleReader, roles: Sequence[str]) -> None:
    """With ``tie_word_embeddings`` false the head's own tensors must be in the file:
    transformers would fill a missing one (random weights, a zero bias), not the tied one."""
    for role in roles:
        if not r.has(role):
            raise ModelError(
                "files",
                f"{r.t.describe()} has no tensor {r.name(role)}, which config.json's "
                "tie_word_embeddings=false requires (the head does not share the tied tensors)",
            )


@dataclass(frozen=True)
class _Stored:
    """What converting the same checkpoint to another dtype needs: the open tensors, the
    checked sizes, and each layer's tensor names and element count (learnt without reading)."""

    tensors: TensorFile
    config: dict  # config.json as read (ModelWeights.config holds the model RoPE's keys)
    sizes: dict
    keys: tuple[tuple[str, ...], ...]  # [layers] tensor names of each layer
    elements: tuple[int, ...]  # [layers] values in each layer

    def converted(self, dtype) -> list[int]:
        """Each layer's bytes once converted to ``dtype``."""
        return [count * np.dtype(dtype).itemsize for count in self.elements]

    def keep(self, dtype) -> bool:
        """Whether every converted layer is kept (they fit in KEEP_CONVERTED_BYTES)."""
        return sum(self.converted(dtype)) <= storage.KEEP_CONVERTED_BYTES


def _head_sizes(sizes: dict) -> tuple[int, int, int]:
    """(heads, kv_heads, d_k) from the checked sizes: kv_heads and head_dim when given."""
    heads = sizes["heads"]
    d_k = sizes.get("head_dim") or sizes["d_model"] // heads
    if sizes.get("rope_dim"):  # latent attention: each head's q and k are [nope ; rope]
        d_k = sizes["nope_dim"] + sizes["rope_dim"]
    return heads, sizes.get("kv_heads") or heads, d_k


def _layer_builder(arch: Architecture, sizes: dict) -> Callable[[RoleReader, int], LayerWeights]:
    heads, kv_heads, d_k = _head_sizes(sizes)
    d_v = sizes.get("v_dim") or d_k  # latent attention's values are v_head_dim wide
    return lambda r, i: _layer(r, i, sizes, heads * d_v, kv_heads * d_k)


def check_config_alone(arch: Architecture, cfg: dict, config_path: Path) -> dict:
    """The checked sizes of config.json ``cfg`` after every check that needs no tensor: the
    family's accepted values and activation, the sizes and epsilon, the rope settings and the
    window. Opening a model and listing it (``available.models``) both run it, so a folder
    the listing calls supported is not refused by the config when opened. ModelError names
    the first refusal."""
    check_config(arch, cfg, ACTIVATIONS)
    sizes = check_config_values(arch, cfg, config_path)
    _settings(arch, cfg, sizes)
    return sizes


def _settings(arch: Architecture, cfg: dict, sizes: dict) -> ModelSettings:
    """Each layer's window and RoPE, the soft-caps and the embedding multiplier, checked
    (:mod:`~attention_explorer.pretrained.layer_plan`)."""
    d_k = sizes.get("rope_dim") or _head_sizes(sizes)[2]  # latent attention turns rope_dim
    return model_settings(arch, cfg, sizes["layers"], lambda c: rotary_plan(arch, c, d_k))


def _survey(arch: Architecture, cfg: dict, tensors: TensorFile) -> _Stored:
    """Config checked, and every layer's tensors found and their shapes checked, with no
    tensor read: a checkpoint that does not add up is refused at load time."""
    sizes = check_config_alone(arch, cfg, tensors.folder / "config.json")
    build = _layer_builder(arch, sizes)
    keys, elements = [], []
    for i in range(sizes["layers"]):
        dry = RoleReader(arch, tensors, dry=True, config=cfg)
        dry.sizes = sizes
        build(dry, i)
        keys.append(tuple(dict.fromkeys(dry.seen)))
        elements.append(sum(int(np.prod(tensors.info(k)[1])) for k in keys[-1]))
    return _Stored(tensors, dict(cfg), sizes, tuple(keys), tuple(elements))


def _build(arch: Architecture, cfg: dict, survey: _Stored, name: str, dtype, word=None):
    """The ModelWeights in ``dtype``; ``word``: the word table to share (one per checkpoint)."""
    r = RoleReader(arch, survey.tensors, dtype, rows=survey.keep(dtype), config=cfg)
    sizes = r.sizes = survey.sizes
    settings = _settings(arch, cfg, sizes)
    plan = settings.rope  # the model's RoPE: its first rotary layer's
    heads, kv_heads, d_k = _head_sizes(sizes)
    d = sizes["d_model"]
    n_layers, max_positions = sizes["layers"], sizes["max_positions"]
    word = word or r.table("word", (None, d))
    learned = arch.positions == "learned"
    build = _layer_builder(arch, sizes)
    layers = storage.StoredLayers(
        lambda i: build(r, i), n_layers, survey.keys, survey.tensors, survey.keep(dtype)
    )
    return ModelWeights(
        name=name,
        arch=arch,
        config=dict(cfg) if settings.rope_keys is None else {**cfg, **settings.rope_keys},
        heads=heads,
        kv_heads=kv_heads,
        d_model=d,
        d_k=d_k,
        max_positions=_context(plan, max_positions, arch, cfg),
        eps=arch.eps(cfg),
        activation=arch.activation(cfg),
        causal=arch.is_causal(cfg),
        scales=tuple(arch.scale_rule(cfg, i, d_k) for i in range(n_layers)),
        word=word,
        position=r.small("position", shape=(max_positions, d)) if learned else None,
        token_type=r.small("token_type", shape=(None, d)),
        ln_embed=r.norm("embed_norm", None, d),
        layers=layers,
        head=_head(r, word, d),
        rope=None if plan is None else plan.frequencies(),
        rotary=plan,
        parallel=arch.parallel(cfg),
        window=settings.window,
        kinds=settings.kinds,
        rotaries=settings.ropes,
        score_cap=settings.score_cap,
        logit_cap=settings.logit_cap,
        embed_scale=settings.embed_scale,
        latent=latent_plan(arch, cfg, sizes),
        dtype=np.dtype(dtype).name,
        stored=survey,
    )


def _context(plan: RotaryPlan | None, max_positions: int, arch=None, cfg=None) -> int:
    """The longest text the model reads: ``max_position_embeddings``; ``factor`` times that
    under a dynamic rope scaling (made to stretch the context: it changes the base only
    beyond ``max_position_embeddings``); ``padding_idx + 1`` fewer when positions start
    there (RoBERTa)."""
    if plan is not None and plan.scaling.kind == "dynamic":
        return max(max_positions, int(plan.scaling.factor * max_positions))
    if arch is not None and arch.position_padding is not None:
        key, default = arch.position_padding
        return max(1, max_positions - int(default if cfg.get(key) is None else cfg[key]) - 1)
    return max_positions


def _config_error(folder: Path, exc: Exception) -> ModelError:
    return ModelError("files", f"{folder / 'config.json'} lacks a needed setting: {exc}")


def read_weights(folder: Path, name: str, dtype="float64") -> ModelWeights:
    """The model in ``folder`` (config.json + safetensors) with its layers read as ``dtype``
    when first used. Refuses (ModelError) a model this machine has not the memory to run."""
    cfg = read_config(folder)
    arch = architecture_for(cfg)
    try:
        survey = _survey(arch, cfg, TensorFile.open(folder))
        tensors = survey.tensors
        need = storage.memory_need(
            sum(tensors.nbytes(k) for k in tensors.names()),
            survey.converted(np.float64),
            survey.keep(np.float64),
        )
        storage.check_memory(name, need, storage.available_memory())
        return _build(arch, cfg, survey, name, dtype)
    except ModelError:
        raise
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise _config_error(folder, exc) from None


def in_dtype(w: ModelWeights, dtype) -> ModelWeights:
    """The same model with its layers (and small tables) read as ``dtype``: no file is read
    again until a layer is used; the word table is shared."""
    if np.dtype(dtype).name == w.dtype or w.stored is None:
        return w
    return _build(w.arch, dict(w.stored.config), w.stored, w.name, dtype, w.word)
