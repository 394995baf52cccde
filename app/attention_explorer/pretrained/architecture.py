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
- which linear layers carry a bias (always, never, or as a config key says): a checkpoint whose
  bias tensors disagree is refused by name (:meth:`Architecture.bias_rule`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

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
    "attn_norm",  # the norm around the attention sublayer
    "ffn_norm",  # the norm around the feed-forward sublayer
    "ffn_in",  # linear d -> d_ff (the "up" projection of a gated feed-forward)
    "ffn_gate",  # linear d -> d_ff (gated feed-forward only)
    "ffn_out",  # linear d_ff -> d
    "lm_head",  # [vocab, d] untied output embedding (absent when tied to ``word``)
    "mlm_dense",  # BERT MLM head: linear d -> d
    "mlm_norm",  # BERT MLM head: its LayerNorm
    "mlm_decoder",  # BERT MLM head: [vocab, d] (absent when tied to ``word``)
    "mlm_bias",  # BERT MLM head: [vocab], the tied bias
    "mlm_decoder_bias",  # BERT MLM head: [vocab], the decoder's own (what transformers adds)
)

#: QK-norm's tensors under the names transformers gives them (Qwen3, OLMo 2, Gemma 3): a
#: record without QK-norm and without these roles is still checked for them, so Qwen3 weights
#: labelled llama are refused rather than run without their norms.
QK_NORM_TENSORS = MappingProxyType(
    {"q_norm": "layers.{i}.self_attn.q_norm", "k_norm": "layers.{i}.self_attn.k_norm"}
)


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
    norm_placement: str = "pre"  # "pre" (x + f(norm(x))) | "post" (norm(x + f(x)))
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
        return tuple(dict.fromkeys(keys))

    def is_causal(self, config: Mapping) -> bool:
        """Whether this model's queries see only earlier tokens."""
        return self.causal or bool(self.causal_key and config.get(self.causal_key, False))

    def eps(self, config: Mapping) -> float:
        """The norms' epsilon."""
        return float(config.get(self.eps_key, self.eps_default))

    def bias_rule(self, config: Mapping, role: str) -> tuple[bool, str | None]:
        """(whether linear ``role`` has a bias, the config key that says so or None when the
        family fixes it)."""
        rule = self.biases.get(role, True)
        if isinstance(rule, str):
            return bool(config.get(rule, False)), rule
        return bool(rule), None

    def ties(self, config: Mapping) -> bool:
        """Whether the output head shares the word table (``tie_word_embeddings``; the
        family's default when absent: the first accepted value, else True as in transformers'
        ``PretrainedConfig``)."""
        default = self.accepted.get("tie_word_embeddings", (True,))[0]
        return bool(config.get("tie_word_embeddings", default))

    def activation(self, config: Mapping) -> str:
        """The feed-forward's activation name as the config gives it."""
        return str(config.get(self.activation_key, self.activation_default))


def check_config(arch: Architecture, config: Mapping, activations: Mapping) -> None:
    """Refuse by name any config value that would change the numbers and is not implemented.

    ``activations`` are the implemented activation names. Raises :class:`ModelError`
    (``what="config"``) naming the key, the value found and the values supported.
    """
    for key, values in arch.accepted.items():
        if key in config and config[key] not in values:  # booleans as config.json writes them
            shown = [
                str(v).lower() if isinstance(v, bool) else repr(v) for v in (config[key], *values)
            ]
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
