"""The architecture record: everything the forward pass needs to know about a model family.

A family (BERT, GPT-2, and later Llama, Qwen2, Mistral) is one :class:`Architecture` in one
file under ``pretrained/families/`` (found by its registry). The forward pass
(:mod:`attention_explorer.pretrained.forward`) and the weight reader
(:mod:`attention_explorer.pretrained.checkpoint.weights`) run once against the record: no
code asks which family it is.

The record states:

- the norm (``layernorm`` or ``rmsnorm``), where it sits (``pre`` or ``post`` the sublayer),
  and the config key of its epsilon;
- the feed-forward: ``mlp`` (``act(x W_in + b_in) W_out + b_out``) or ``gated``
  (``(act(x W_gate) * x W_in) W_out``), and the config key of its activation;
- the positions (``learned`` tables added to the embeddings, or ``rotary``);
- the attention scale rule (a function of the config, the layer and d_k) and whether the
  family is causal (or which config key makes it causal);
- the map from roles (``W_Q`` of layer i, the word table, the final norm…) to checkpoint
  tensor names, with the prefixes a checkpoint may put before them;
- the config keys it reads, and every other key that would change the numbers, with the values
  it accepts: any other value is refused by name (:func:`check_config`);
- whether the attention has QK-norm (Qwen3): an RMSNorm with its own ``[d_k]`` weights
  (roles ``q_norm`` and ``k_norm``, shared by all heads, the model's epsilon) on each head's
  q and k before RoPE; its tensors are then required, and refused when present otherwise;
- the rest of today's variants (see ``pretrained/layer_plan.py``): RMSNorm weights stored as
  an offset from 1 (Gemma), an embedding multiplier, QK-norm over the whole projection
  (OLMo 2), tanh soft-caps on the scores and the logits (Gemma 2), norms on the sublayers'
  outputs (``attn_out_norm``/``ffn_out_norm``), and per-layer windows and RoPE (local and
  global layers, layers without positions) from the family's ``layer_plan``;
- a mixture-of-experts feed-forward (``experts``: an
  :class:`~attention_explorer.pretrained.experts.plan.ExpertsPlan`, see that package);
- attention sinks (gpt-oss: ``attention_sinks``, each layer's ``sinks`` logits [heads] in
  every softmax row's denominator), required when set and refused by name otherwise;
- which linear layers carry a bias (always, never, or as a config key says): a checkpoint whose
  bias tensors disagree is refused by name (:meth:`Architecture.bias_rule`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from attention_explorer.pretrained.experts.check import check_experts
from attention_explorer.pretrained.experts.plan import ExpertsPlan
from attention_explorer.pretrained.model_errors import ModelError

#: Roles of the tensors a family maps to checkpoint names. Per-layer names contain ``{i}``.
#: A ``norm`` role names a module: ``.weight``/``.bias`` (or ``.gamma``/``.beta``) are added.
#: A ``linear`` role names a module too: ``.weight`` and, when present, ``.bias``.
TENSOR_ROLES = (
    "word",  # [vocab, d]
    "position",  # [max_positions, d] (learned positions)
    "token_type",  # [types, d] (BERT)
    "embed_norm",  # norm after the embeddings (BERT)
    "final_norm",  # norm before the output head (GPT-2's ln_f)
    "q",  # linear d -> heads * d_k
    "k",  # linear d -> kv_heads * d_k
    "v",  # linear d -> kv_heads * d_k
    "qkv",  # fused q, k, v (GPT-2's c_attn)
    "o",  # linear heads * d_k -> d
    "q_norm",  # QK-norm: RMSNorm of each head's q over d_k, weight [d_k] (Qwen3)
    "k_norm",  # QK-norm: RMSNorm of each head's k over d_k, weight [d_k] (Qwen3)
    "sinks",  # attention sinks: one learned logit per query head, [heads] (gpt-oss)
    "attn_norm",  # the norm around the attention sublayer
    "ffn_norm",  # the norm around the feed-forward sublayer
    "attn_out_norm",  # a norm on the attention's output before the residual (Gemma 2, OLMo 2)
    "ffn_out_norm",  # a norm on the feed-forward's output before the residual (Gemma 2, OLMo 2)
    "ffn_in",  # linear d -> d_ff (the "up" projection of a gated feed-forward)
    "ffn_gate",  # linear d -> d_ff (gated feed-forward only)
    "ffn_gate_up",  # fused gate and up, linear d -> 2 d_ff, gate first (Phi-3's gate_up_proj)
    "ffn_out",  # linear d_ff -> d
    "lm_head",  # [vocab, d] untied output embedding (absent when tied to ``word``)
    "mlm_dense",  # BERT MLM head: linear d -> d
    "mlm_norm",  # BERT MLM head: its LayerNorm
    "mlm_decoder",  # BERT MLM head: [vocab, d] (absent when tied to ``word``)
    "mlm_bias",  # BERT MLM head: [vocab], the tied bias
    "mlm_decoder_bias",  # BERT MLM head: [vocab], the decoder's own (what transformers adds)
    # multi-head latent attention (DeepSeek-V3, ``pretrained/latent/``):
    "q_a",  # linear d -> q_lora (q_a_proj)
    "q_a_norm",  # RMSNorm [q_lora] (q_a_layernorm)
    "q_b",  # linear q_lora -> heads * (nope + rope) (q_b_proj)
    "kv_a",  # linear d -> kv_lora + rope: the latent and the shared rotary key
    "kv_a_norm",  # RMSNorm [kv_lora] (kv_a_layernorm)
    "kv_b",  # linear kv_lora -> heads * (nope + v): each head's k_nope and v
)

#: QK-norm's tensors under the names transformers gives them (Qwen3, OLMo 2, Gemma 3): a
#: record without QK-norm and without these roles is still checked for them, so Qwen3 weights
#: labelled llama are refused rather than run without their norms.
QK_NORM_TENSORS = MappingProxyType(
    {"q_norm": "layers.{i}.self_attn.q_norm", "k_norm": "layers.{i}.self_attn.k_norm"}
)


#: Attention sinks' tensor under the name transformers gives it (gpt-oss): a record without
#: sinks refuses a file holding it, so gpt-oss weights relabelled are not run without them.
SINK_TENSOR = "layers.{i}.self_attn.sinks"


#: The feed-forward's own norms under transformers' names (Gemma 2 and 3's sandwich, OLMo 2's
#: output norm): a record that does not name them refuses a file holding them, so Gemma 2
#: weights labelled gemma or llama are not run without those norms.
FFN_NORM_TENSORS = ("layers.{i}.pre_feedforward_layernorm", "layers.{i}.post_feedforward_layernorm")


def inverse_sqrt_dk(config: Mapping, layer: int, d_k: int) -> float:
    """The usual scale rule: scores are multiplied by ``1 / sqrt(d_k)``."""
    return 1.0 / math.sqrt(d_k)


#: The sizes under transformers' standard config names, which BERT and the Llama-like families
#: use (GPT-2 has names of its own). role -> (config key, default when absent).
STANDARD_SIZES: Mapping[str, tuple[str, int | None]] = MappingProxyType(
    {
        "layers": ("num_hidden_layers", None),
        "heads": ("num_attention_heads", None),
        "d_model": ("hidden_size", None),
        "d_ff": ("intermediate_size", None),
        "vocab": ("vocab_size", None),
    }
)


@dataclass(frozen=True)
class Architecture:
    """What a model family is made of; see the module docstring."""

    family: str  # registry key, e.g. "bert"
    label: str  # how the supported-families message names it
    model_types: tuple[str, ...]  # config.json "model_type" values of this family
    eps_key: str  # config key of the norm's epsilon
    eps_default: float
    sizes: Mapping[str, tuple[str, int | None]]  # role -> (config key, default)
    tensors: Mapping[str, str]  # role -> checkpoint name (see TENSOR_ROLES)
    norm: str = "layernorm"  # "layernorm" | "rmsnorm"
    #: "pre" (x + f(norm(x))) | "post" (norm(x + f(x)), BERT) | "output" (x + norm(f(x)),
    #: OLMo 2); "pre" and "output" also norm a sublayer's output when the record names
    #: ``attn_out_norm``/``ffn_out_norm`` (Gemma 2's sandwich: x + norm_2(f(norm_1(x)))).
    norm_placement: str = "pre"
    mlp: str = "mlp"  # "mlp" | "gated"
    activation_key: str = "hidden_act"  # config key naming the feed-forward's activation
    activation_default: str = "gelu"
    positions: str = "learned"  # "learned" | "rotary"
    causal: bool = True  # queries see only earlier tokens
    linear_layout: str = "out_in"  # "out_in": nn.Linear [out, in]; "in_out": Conv1D [in, out]
    prefixes: tuple[str, ...] = ("",)  # tried in order before every tensor name
    causal_key: str | None = None  # a config key that, when true, makes the model causal
    scale_rule: Callable[[Mapping, int, int], float] = inverse_sqrt_dk
    #: Config keys that change the numbers, with the values this record implements. A value
    #: outside the tuple is refused by name; a missing key takes the first value.
    accepted: Mapping[str, tuple] = field(default_factory=dict)
    #: Other config keys the family reads (sizes, eps, activation are read too).
    reads: tuple[str, ...] = ()
    #: How the family's output head turns the last hidden state into logits:
    #: "lm" (final norm, then lm_head or the tied word table), "mlm" (BERT's prediction head),
    #: or "none".
    head: str = "none"
    #: Config key of a sliding attention window (Mistral's ``sliding_window``), if any.
    window_key: str | None = None
    #: Family-specific checks of config values a tuple cannot list (Qwen2's ``layer_types``).
    extra_check: Callable[[Mapping], None] | None = None
    #: Which linear roles carry a bias: role -> True (always), False (never, as transformers
    #: builds the layer with ``bias=False``) or the config key whose truth says so (Llama's
    #: ``attention_bias``). A linear role not listed always has one (GPT-2, BERT).
    biases: Mapping[str, bool | str] = field(default_factory=dict)
    #: QK-norm (Qwen3): the ``q_norm`` and ``k_norm`` RMSNorms (``[d_k]`` weights, the norm's
    #: epsilon) on each head's q and k after the projections and before RoPE.
    qk_norm: bool = False
    #: Over what QK-norm runs: "head" (each head's d_k: Qwen3, Gemma 3) or "all" (the whole
    #: projection before it is split into heads, weights ``[heads*d_k]``/``[kv*d_k]``: OLMo 2).
    qk_norm_over: str = "head"
    #: RMSNorm weights stored as an offset: every norm computes ``x̂ * (norm_offset + w)``
    #: (Gemma: 1, ``x̂ * (1 + w)``); 0 is ``x̂ * w``.
    norm_offset: float = 0.0
    #: The embeddings' multiplier as a function of the config (Gemma: ``hidden_size**0.5``,
    #: rounded to the run's dtype as transformers casts it), or None.
    embed_scale: Callable[[Mapping], float] | None = None
    #: Activation names the family reads as another (Gemma reads ``gelu`` as the tanh GELU).
    activation_aliases: Mapping[str, str] = field(default_factory=dict)
    #: Config keys of tanh soft-caps ``cap * tanh(x / cap)`` (null: none): on the scaled
    #: scores before the mask, and on the logits (Gemma 2).
    score_cap_key: str | None = None
    logit_cap_key: str | None = None
    #: What transformers' config class gives keys that config.json leaves out (Gemma 2's
    #: ``attn_logit_softcapping`` 50, ``sliding_window`` 4096…); a key set to null stays null.
    config_defaults: Mapping[str, object] = field(default_factory=dict)
    #: Each layer's window and RoPE from the config (a ``layer_plan.LayerKind`` per layer;
    #: Gemma 2/3's local and global layers, Qwen2's max_window_layers, SmolLM3's NoPE layers);
    #: None: every layer alike (``window_key``, the model's RoPE).
    layer_plan: Callable[[Mapping], tuple] | None = None

    #: Partial rotary (GPT-NeoX, Phi, StableLM): (the config key of the fraction of each
    #: head's d_k that RoPE turns, its default); transformers 5 writes it as the rope dict's
    #: ``partial_rotary_factor``, which wins. None: whole heads rotate (a fraction other than
    #: 1 is refused by name).
    partial_rotary: tuple[str, float] | None = None
    #: The rope types the family reads and the kind each is (Phi-3 reads ``su`` and ``yarn``
    #: as ``longrope`` and refuses the rest); None: every supported type as itself.
    rope_kinds: Mapping[str, str] | None = None
    #: The pretraining context when config.json lacks ``original_max_position_embeddings``
    #: and the family's config class has a default for it (Phi-3: 4096); None: none.
    original_context: int | None = None
    #: Parallel residual ``x + attn(norm_1(x)) + ffn(norm_2(x))`` (GPT-NeoX, Phi, StableLM):
    #: False, True, or (the config key that says so, its default).
    parallel_residual: bool | tuple[str, bool] = False
    #: The parallel feed-forward's norm: "own" (``ffn_norm``, GPT-NeoX) or "shared" (the
    #: attention's ``attn_norm``, Phi and StableLM, whose files then have no ``ffn_norm``).
    parallel_norm: str = "own"
    #: How a fused ``qkv`` weight orders its outputs: "blocks" (all q, then k, then v: GPT-2,
    #: Phi-3) or "heads" (per head [q, k, v], GPT-NeoX's ``query_key_value``).
    qkv_layout: str = "blocks"
    #: Whether the LM head has a bias (Phi's ``lm_head.bias``), required when True.
    head_bias: bool = False
    #: Learned positions counted from ``padding_idx + 1`` with pad tokens at ``padding_idx``
    #: (RoBERTa's ``create_position_ids_from_input_ids``): the config key of ``padding_idx``
    #: and its default; None: positions 0..n-1.
    position_padding: tuple[str, int] | None = None
    #: Attention sinks (gpt-oss): each layer's ``sinks`` tensor, one logit per query head
    #: that joins every softmax row's denominator (the row's weights sum to 1 − its share);
    #: required when True, refused by name when False.
    attention_sinks: bool = False
    #: The masked-LM head's activation when the family fixes it (RoBERTa's head calls the exact
    #: GELU whatever ``hidden_act`` says); None: the feed-forward's.
    head_activation: str | None = None
    #: A mixture-of-experts feed-forward (Qwen3-MoE, OLMoE, gpt-oss, DeepSeek-V3): its
    #: routing rule, expert tensors and config keys (``pretrained/experts/``); None: dense.
    experts: ExpertsPlan | None = None
    #: Multi-head latent attention (DeepSeek-V3, ``pretrained/latent/``): keys and values
    #: from one latent per token (the sizes' roles ``kv_lora``, ``nope_dim``, ``rope_dim``,
    #: ``v_dim``; config.json's ``q_lora_rank``), the tensor roles ``q_a``…``kv_b``.
    latent: bool = False

    def parallel(self, config: Mapping) -> bool:
        """Whether this model's layers use the parallel residual."""
        rule = self.parallel_residual
        if isinstance(rule, tuple):
            return bool(config.get(rule[0], rule[1]))
        return bool(rule)

    def size(self, config: Mapping, role: str) -> int | None:
        """The size ``role`` (``layers``, ``heads``, ``d_model``…) read from ``config``."""
        key, default = self.sizes.get(role, (None, None))
        value = config.get(key, default) if key is not None else default
        return None if value is None else int(value)

    def read_keys(self) -> tuple[str, ...]:
        """Every config key this family reads or checks."""
        keys = [key for key, _ in self.sizes.values() if key]
        keys += [self.eps_key, self.activation_key, *self.accepted, *self.reads]
        if self.causal_key:
            keys.append(self.causal_key)
        keys += [key for key in (self.score_cap_key, self.logit_cap_key) if key]
        keys += list(self.experts.keys()) if self.experts is not None else []
        return tuple(dict.fromkeys(keys))

    def is_causal(self, config: Mapping) -> bool:
        """Whether this model's queries see only earlier tokens."""
        return self.causal or bool(self.causal_key and config.get(self.causal_key, False))

    def eps(self, config: Mapping) -> float:
        """The norms' epsilon."""
        return float(config.get(self.eps_key, self.eps_default))

    def bias_rule(self, config: Mapping, role: str) -> tuple[bool, str | None]:
        """(whether linear ``role`` has a bias, the config key that says so or None when the
        family fixes it). An absent key takes the family's default: its first accepted value
        (GPT-NeoX's ``attention_bias`` is true), else false."""
        rule = self.biases.get(role, True)
        if isinstance(rule, str):
            return bool(config.get(rule, self.accepted.get(rule, (False,))[0])), rule
        return bool(rule), None

    def ties(self, config: Mapping) -> bool:
        """Whether the output head shares the word table (``tie_word_embeddings``; the
        family's default when absent: the first accepted value, else True as in transformers'
        ``PretrainedConfig``)."""
        default = self.accepted.get("tie_word_embeddings", (True,))[0]
        return bool(config.get("tie_word_embeddings", default))

    def activation(self, config: Mapping) -> str:
        """The feed-forward's activation name as the config gives it (through the family's
        ``activation_aliases``)."""
        name = str(config.get(self.activation_key, self.activation_default))
        return self.activation_aliases.get(name, name)


def _as_json(value) -> str:
    """A config value as config.json writes it: true, false, null, else its repr."""
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else repr(value)


def check_config(arch: Architecture, config: Mapping, activations: Mapping) -> None:
    """Refuse by name any config value that would change the numbers and is not implemented.

    ``activations`` are the implemented activation names. Raises :class:`ModelError`
    (``what="config"``) naming the key, the value found and the values supported.
    """
    for key, values in arch.accepted.items():
        if key in config and config[key] not in values:  # booleans as config.json writes them
            shown = [_as_json(v) for v in (config[key], *values)]
            only = " or ".join(shown[1:]) + (" is" if len(values) == 1 else " are")
            raise ModelError(
                "config",
                f"config.json sets {key} {shown[0]}, which {arch.label} support here does "
                f"not implement; only {only}",
            )
    act = arch.activation(config)
    if act not in activations:
        raise ModelError(
            "config",
            f"config.json sets {arch.activation_key}={act!r}, an activation not implemented here "
            f"(supported: {', '.join(sorted(activations))})",
        )
    if arch.extra_check is not None:
        arch.extra_check(config)
    if arch.experts is not None:
        check_experts(arch.experts, config, arch.label, arch.size(config, "layers") or 0)
    if arch.positions not in ("learned", "rotary"):
        raise ModelError(
            "config", f"{arch.label}: {arch.positions} positions are not implemented yet"
        )


def scale_setting(factor: float, d_k: int) -> tuple[str, float]:
    """The engine's (``scale``, ``scale_factor``) for a score factor: ``sqrt_dk`` when it is
    exactly ``1/sqrt(d_k)``, ``none`` when 1, else ``custom``."""
    if factor == 1.0 / math.sqrt(d_k):
        return "sqrt_dk", 1.0
    if factor == 1.0:
        return "none", 1.0
    return "custom", float(factor)
