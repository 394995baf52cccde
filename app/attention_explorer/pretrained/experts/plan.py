"""What a family's mixture-of-experts feed-forward is made of: :class:`ExpertsPlan`, the
``experts`` field of the architecture record, and the plans of the four families that have
one (:data:`QWEN3_MOE`, :data:`OLMOE`, :data:`GPT_OSS`, :data:`DEEPSEEK_V3`).

The plan names a routing rule (:data:`RULES`), the expert MLP's kind (:data:`EXPERT_KINDS`),
the config keys each reads and the tensor names of each expert role (:data:`EXPERT_ROLES`).
Nothing here imports the record (``architecture.py`` imports this module).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from attention_explorer.pretrained.model_errors import ModelError

#: The routing rules and the config keys each reads (besides the top-k and the count).
RULES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "softmax_topk": ("norm_topk_prob",),  # Qwen3-MoE, OLMoE
        "topk_softmax": (),  # gpt-oss (its router has a bias)
        "sigmoid_grouped": (  # DeepSeek-V3
            "n_group",
            "topk_group",
            "norm_topk_prob",
            "routed_scaling_factor",
        ),
    }
)

#: The expert MLPs: ``gated`` is ``down(act(gate x) * up x)`` with the record's activation;
#: ``clamped_swiglu`` is gpt-oss's (biases, gate clamped above at ``swiglu_limit``, up to
#: ±limit, ``(up + 1) * gate * sigmoid(swiglu_alpha * gate)``).
EXPERT_KINDS = ("gated", "clamped_swiglu")

#: The expert tensors' roles; names in ``ExpertsPlan.tensors`` contain ``{i}`` (the layer)
#: and, per expert, ``{j}`` (the expert). Linear roles name a module (``.weight``/``.bias``
#: added), fused roles name the 3-D tensor itself.
EXPERT_ROLES = (
    "router",  # linear d -> experts (``mlp.gate``, gpt-oss ``mlp.router``)
    "router_score_bias",  # [experts] added to the scores for the choice only (DeepSeek-V3)
    "expert_gate",  # per expert: linear d -> f
    "expert_up",  # per expert: linear d -> f
    "expert_down",  # per expert: linear f -> d
    "experts_gate_up",  # fused, all experts: see ``fused_layout``
    "experts_down",  # fused, all experts: [experts, f, d] (in_out) or [experts, d, f] (out_in)
    "shared_gate",  # shared experts: linear d -> n_shared * f
    "shared_up",
    "shared_down",
)


@dataclass(frozen=True)
class ExpertsPlan:
    """A family's routed-experts feed-forward (the record's ``experts`` field)."""

    rule: str  # a key of RULES
    tensors: Mapping[str, str]  # role (EXPERT_ROLES) -> checkpoint name with {i} and {j}
    count_keys: tuple[str, ...] = ("num_experts",)  # the first one present gives the count
    top_k_key: str = "num_experts_per_tok"
    width_key: str = "moe_intermediate_size"  # each routed expert's inner width f
    kind: str = "gated"  # a member of EXPERT_KINDS
    router_bias: bool = False  # the router linear has a bias (gpt-oss)
    expert_bias: bool = False  # the experts' linears have biases (gpt-oss)
    #: How a fused ``experts_gate_up`` stores gate and up: "interleaved" (gpt-oss: gate at
    #: even outputs, up at odd) or "blocks" (all gate, then all up); and its orientation:
    #: "in_out" ([experts, d, 2f], gpt-oss) or "out_in" ([experts, 2f, d]).
    fused_layout: str = "blocks"
    fused_orientation: str = "out_in"
    shared_key: str | None = None  # config key of the shared experts' count (DeepSeek-V3)
    #: Whether layer i is sparse (routed) given the config; None: every layer is.
    sparse: Callable[[Mapping, int], bool] | None = None
    layer_keys: tuple[str, ...] = ()  # the config keys ``sparse`` reads
    #: Config keys that change the numbers, with the values implemented (first: default).
    accepted: Mapping[str, tuple] = field(default_factory=dict)
    #: Keys whose mere presence (non-null) is refused, with why.
    refused: Mapping[str, str] = field(default_factory=dict)
    #: Defaults of keys config.json may leave out (transformers' config class's).
    defaults: Mapping[str, object] = field(default_factory=dict)

    def get(self, config: Mapping, key: str):
        """A config value, or the plan's default for it (None when it has none)."""
        value = config.get(key)
        return self.defaults.get(key) if value is None else value

    def count(self, config: Mapping) -> int:
        """The number of routed experts."""
        for key in self.count_keys:
            if config.get(key) is not None:
                return _positive(config[key], key)
        raise ModelError("config", f"config.json sets none of {', '.join(self.count_keys)}")

    def top_k(self, config: Mapping) -> int:
        """How many experts each token is routed to."""
        return _positive(self.get(config, self.top_k_key), self.top_k_key)

    def width(self, config: Mapping) -> int:
        """Each routed expert's inner width f."""
        return _positive(self.get(config, self.width_key), self.width_key)

    def shared(self, config: Mapping) -> int:
        """How many shared experts (their inner width is ``shared * f``); 0 when none."""
        if self.shared_key is None:
            return 0
        value = self.get(config, self.shared_key)
        return 0 if value in (None, 0) else _positive(value, self.shared_key)

    def is_sparse(self, config: Mapping, layer: int) -> bool:
        """Whether layer ``layer``'s feed-forward is routed experts (else the dense MLP)."""
        return True if self.sparse is None else bool(self.sparse(config, layer))

    def keys(self) -> tuple[str, ...]:
        """Every config key the plan reads or checks."""
        keys = [*self.count_keys, self.top_k_key, self.width_key, *RULES[self.rule]]
        keys += [*self.accepted, *self.refused, *self.layer_keys]
        keys += [self.shared_key] if self.shared_key else []
        keys += ["swiglu_limit", "swiglu_alpha"] if self.kind == "clamped_swiglu" else []
        return tuple(dict.fromkeys(keys))


def _positive(value, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelError("config", f"config.json sets {key} {value!r}; expected an integer >= 1")
    return value
