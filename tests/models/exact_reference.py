"""The exact float64 parity reference: transformers' eager model with the steps it forces to
float32 patched to float64, and sharp query/key weights for checkpoints.

Even inside a model loaded in float64, transformers runs three steps in float32:

- **RMSNorm** (Llama, Qwen2, Qwen3 and its QK-norm, Mistral): ``hidden_states.to(torch.float32)``
  before the mean square, so the normalised vector carries float32 rounding (~6e-8 relative).
- **RoPE angles**: ``inv_freq`` is built with ``dtype=torch.float`` (float32) and the rotary
  embedding's forward multiplies ``position_ids.float()`` by it, so every angle (and its cos
  and sin) is a float32 number; at position p the angle's error grows like p · 6e-8.
- **The softmax** of eager attention: ``softmax(scores, dtype=torch.float32)``.

GPT-2 (without ``reorder_and_upcast_attn``) and BERT force none of them: their stock float64
run is already exact, and the patches below leave them alone.

:func:`exact_float64` is a context manager that swaps in float64 versions of those three
steps for every family it is given (the RMSNorm and rotary classes' ``forward`` and each
modeling module's ``eager_attention_forward``), counting the calls so a test can prove they
ran (and the float32 softmax of Qwen3-MoE's and OLMoE's routers; a mixture of experts
loads with transformers' plain expert loop). :func:`run_reference` loads a saved checkpoint
in float64 (eager attention) and returns its attentions, every hidden state (the last one at
the *input* of the final norm, where ``ae.model_run`` reports it) and its logits, exact or
stock. :func:`sharpen` scales a saved checkpoint's query and key projections so that layer 0's
attention rows peak near a target, as trained models' do.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
import transformers
from safetensors.torch import load_file, save_file
from torch import nn

#: The modeling modules whose RMSNorm, rotary embedding and eager softmax run in float32.
ROTARY_FAMILIES = ("llama", "qwen2", "qwen3", "mistral", "gpt_neox", "phi", "phi3", "stablelm")
ROTARY_FAMILIES += ("gemma", "gemma2", "gemma3", "olmo2", "smollm3")
ROTARY_FAMILIES += ("qwen3_moe", "olmoe")
ROTARY_FAMILIES += ("deepseek_v3",)
ROTARY_FAMILIES += ("gpt_oss",)

#: Families whose rotary embedding returns cos and sin of the d_k/2 angles (no duplicated
#: halves: gpt-oss rotates ``x1 cos - x2 sin`` half by half) and whose eager attention keeps
#: its own softmax (gpt-oss's runs in the logits' dtype over the scores and the sink): only
#: counted, not replaced.
HALF_ROTARY_FAMILIES = ("gpt_oss",)
OWN_SOFTMAX_FAMILIES = ("gpt_oss",)

#: Routers that compute in float32 (``softmax(..., dtype=torch.float)``), by family: the class
#: whose forward :func:`exact_float64` swaps for a float64 one (same rule, the logits' dtype).
SOFTMAX_ROUTERS = {"qwen3_moe": "Qwen3MoeTopKRouter", "olmoe": "OlmoeTopKRouter"}
#: DeepSeek-V3's router, which casts the hidden state and its weight to float32.
SIGMOID_ROUTERS = {"deepseek_v3": "DeepseekV3TopkRouter"}

#: Families whose RMSNorm multiplies by ``1 + w`` (Gemma's), and whose rotary embedding takes
#: the layer type (Gemma 3: local and global RoPE).
OFFSET_NORM_FAMILIES = ("gemma", "gemma2", "gemma3")
LAYER_TYPE_ROPE_FAMILIES = ("gemma3",)

#: Class name stems of each rotary family (``LlamaRMSNorm``, ``LlamaRotaryEmbedding``...).
_STEMS = {
    "llama": "Llama",
    "qwen2": "Qwen2",
    "qwen3": "Qwen3",
    "mistral": "Mistral",
    "gpt_neox": "GPTNeoX",
    "phi": "Phi",
    "phi3": "Phi3",
    "stablelm": "StableLm",
    "gemma": "Gemma",
    "gemma2": "Gemma2",
    "gemma3": "Gemma3",
    "olmo2": "Olmo2",
    "smollm3": "SmolLM3",
    "qwen3_moe": "Qwen3Moe",
    "olmoe": "Olmoe",
    "deepseek_v3": "DeepseekV3",
    "gpt_oss": "GptOss",
}

#: The RoPE types whose float64 inverse frequencies :func:`exact_inv_freq` knows.
EXACT_ROPE_TYPES = ("default", "linear", "llama3", "dynamic", "yarn", "longrope")


def _yarn_inv_freq(params, config, dim: int, base: float) -> torch.Tensor:
    """``_compute_yarn_parameters``' frequencies with its float32 ramp and powers in float64."""
    factor = params["factor"]
    original = params["original_max_position_embeddings"]
    if factor is None:
        factor = config.max_position_embeddings / original
    beta_fast, beta_slow = params.get("beta_fast") or 32, params.get("beta_slow") or 1

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if params.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    extrapolation_factor = 1 - ramp
    return (1.0 / (factor * pos_freqs)) * (1 - extrapolation_factor) + (
        1.0 / pos_freqs
    ) * extrapolation_factor


def exact_inv_freq(config, seq_len: int | None = None) -> torch.Tensor:
    """The rotary inverse frequencies of ``config`` in float64 for a text of ``seq_len``
    tokens: transformers' own formulas (``compute_default_rope_parameters`` and the
    ``_compute_*_parameters`` of linear, llama3, dynamic, yarn and longrope, with the update
    that dynamic and longrope make for the text's length) with the float32 steps in float64."""
    params = config.rope_parameters
    rope_type = params.get("rope_type", "default")
    if rope_type not in EXACT_ROPE_TYPES:
        raise NotImplementedError(f"no float64 inverse frequencies for rope_type {rope_type!r}")
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    dim = int(head_dim * params.get("partial_rotary_factor", 1.0))
    base = params["rope_theta"]
    if rope_type == "dynamic":  # the base grows once the text outgrows max_position_embeddings
        limit = config.max_position_embeddings
        longest = max(seq_len or 0, limit)
        factor = params["factor"]
        base = base * ((factor * longest / limit) - (factor - 1)) ** (dim / (dim - 2))
    if rope_type == "yarn":
        return _yarn_inv_freq(params, config, dim, base)
    exponents = torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float64) / dim
    if rope_type == "longrope":
        long = seq_len is not None and seq_len > params["original_max_position_embeddings"]
        ext = torch.tensor(params["long_factor" if long else "short_factor"], dtype=torch.float64)
        return 1.0 / (ext * base**exponents)
    inv_freq = 1.0 / (base**exponents)
    if rope_type == "linear":
        return inv_freq / params["factor"]
    if rope_type == "llama3":
        factor = params["factor"]
        low, high = params["low_freq_factor"], params["high_freq_factor"]
        old_context = params["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > old_context / low, inv_freq / factor, inv_freq)
        smooth = (old_context / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < old_context / high) * ~(wavelen > old_context / low)
        return torch.where(medium, smoothed, scaled)
    return inv_freq


def _require_float64(tensor: torch.Tensor, step: str) -> None:
    if tensor.dtype != torch.float64:
        raise TypeError(f"the exact reference's {step} got {tensor.dtype}; load in float64")


def _rms_norm_forward(calls: Counter):
    """RMSNorm's forward with the mean square and rsqrt in float64 (no float32 cast)."""

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        _require_float64(hidden_states, "RMSNorm")
        calls["rms_norm"] += 1
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))

    return forward


def _offset_rms_norm_forward(calls: Counter):
    """Gemma's RMSNorm (``x̂ * (1 + w)``, computed by transformers in float32) in float64."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _require_float64(x, "RMSNorm")
        calls["rms_norm"] += 1
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return normed * (1.0 + self.weight)

    return forward


def _layer_type_rotary_forward(calls: Counter):
    """Gemma 3's rotary embedding (one RoPE per layer type) with float64 frequencies, angles,
    cos and sin."""

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor, layer_type: str):
        _require_float64(x, "rotary embedding")
        calls["rotary"] += 1
        config = self.config
        one_type = SimpleNamespace(
            rope_parameters=config.rope_parameters[layer_type],
            head_dim=getattr(config, "head_dim", None),
            hidden_size=config.hidden_size,
            num_attention_heads=config.num_attention_heads,
            max_position_embeddings=config.max_position_embeddings,
        )
        inv_freq = exact_inv_freq(one_type, int(position_ids.max()) + 1).to(x.device)
        angles = position_ids[..., None].to(torch.float64) * inv_freq
        emb = torch.cat((angles, angles), dim=-1)
        scaling = getattr(self, f"{layer_type}_attention_scaling")
        return emb.cos() * scaling, emb.sin() * scaling

    return forward


def _rotary_forward(calls: Counter):
    """The rotary embedding's forward with float64 inverse frequencies, angles, cos and sin
    (transformers computes all four in float32, with autocast disabled)."""

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor):
        _require_float64(x, "rotary embedding")
        calls["rotary"] += 1
        seq_len = int(position_ids.max()) + 1
        inv_freq = exact_inv_freq(self.config, seq_len).to(x.device)
        angles = position_ids[..., None].to(torch.float64) * inv_freq
        emb = torch.cat((angles, angles), dim=-1)
        return emb.cos() * self.attention_scaling, emb.sin() * self.attention_scaling

    return forward


def _half_rotary_forward(calls: Counter):
    """gpt-oss's rotary embedding (cos and sin of the d_k/2 angles, not duplicated) with
    float64 inverse frequencies, angles, cos and sin."""

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor):
        _require_float64(x, "rotary embedding")
        calls["rotary"] += 1
        inv_freq = exact_inv_freq(self.config, int(position_ids.max()) + 1).to(x.device)
        angles = position_ids[..., None].to(torch.float64) * inv_freq
        return angles.cos() * self.attention_scaling, angles.sin() * self.attention_scaling

    return forward


def _counted_attention(original, calls: Counter):
    """A family's own eager attention (already float64 throughout), counted."""

    def eager_attention_forward(module, query, *args, **kwargs):
        _require_float64(query, "eager attention")
        calls["softmax"] += 1
        return original(module, query, *args, **kwargs)

    return eager_attention_forward


def _eager_attention(module_of_family, calls: Counter):
    """The family's ``eager_attention_forward`` with its softmax in float64 (transformers
    passes ``dtype=torch.float32``); everything else is the family's own code (GPT-NeoX has
    no grouped-query repeat)."""

    def repeat_kv(states: torch.Tensor, groups: int) -> torch.Tensor:
        return states if groups == 1 else states.repeat_interleave(groups, dim=1)

    def eager_attention_forward(
        module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs
    ):
        _require_float64(query, "eager attention")
        calls["softmax"] += 1
        groups = getattr(module, "num_key_value_groups", 1)
        key_states = repeat_kv(key, groups)
        value_states = repeat_kv(value, groups)
        scores = torch.matmul(query, key_states.transpose(2, 3)) * scaling
        softcap = kwargs.get("softcap")
        if softcap is not None:  # Gemma 2: cap * tanh(scores / cap), in the query's dtype
            scores = torch.tanh(scores / softcap) * softcap
        if attention_mask is not None:
            scores = scores + attention_mask
        weights = nn.functional.softmax(scores, dim=-1, dtype=torch.float64)
        output = torch.matmul(weights, value_states).transpose(1, 2).contiguous()
        return output, weights

    return eager_attention_forward


def _softmax_router_forward(calls: Counter):
    """Qwen3-MoE's and OLMoE's router (softmax over the experts, top-k, renormalised iff
    ``norm_topk_prob``) with the softmax in float64 (transformers casts it to float32)."""

    def forward(self, hidden_states: torch.Tensor):
        _require_float64(hidden_states, "router")
        calls["router"] += 1
        hidden_states = hidden_states.reshape(-1, self.hidden_dim)
        router_logits = nn.functional.linear(hidden_states, self.weight)  # [n, experts]
        probs = nn.functional.softmax(router_logits, dim=-1, dtype=torch.float64)
        top_value, top_index = torch.topk(probs, self.top_k, dim=-1)  # [n, k]
        if self.norm_topk_prob:
            top_value = top_value / top_value.sum(dim=-1, keepdim=True)
        return router_logits, top_value, top_index

    return forward


def _sigmoid_router_forward(calls: Counter):
    """DeepSeek-V3's router (sigmoid scores, group-limited choice by scores + the correction
    bias, the chosen scores renormalised iff ``norm_topk_prob``, times the scaling factor),
    transformers' own code with its float32 casts removed (the hidden state's dtype)."""

    def forward(self, hidden_states: torch.Tensor):
        _require_float64(hidden_states, "router")
        calls["router"] += 1
        hidden_states = hidden_states.view(-1, self.hidden_dim)
        router_logits = nn.functional.linear(hidden_states, self.weight.to(hidden_states.dtype))
        scores = router_logits.sigmoid()
        bias = self.e_score_correction_bias.to(scores.dtype)
        scores_for_choice = scores + bias
        per_group = self.num_experts // self.num_group
        group_scores = (
            scores_for_choice.view(-1, self.num_group, per_group).topk(2, dim=-1)[0].sum(dim=-1)
        )
        group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
        group_mask = torch.zeros_like(group_scores)
        group_mask.scatter_(1, group_idx, 1)
        score_mask = (
            group_mask.unsqueeze(-1)
            .expand(-1, self.num_group, per_group)
            .reshape(-1, self.num_experts)
        )
        scores_for_choice = scores_for_choice.masked_fill(~score_mask.bool(), float("-inf"))
        topk_indices = torch.topk(scores_for_choice, k=self.top_k, dim=-1, sorted=False)[1]
        topk_weights = scores.gather(1, topk_indices)
        if self.norm_topk_prob:
            topk_weights = topk_weights / (topk_weights.sum(dim=-1, keepdim=True) + 1e-20)
        return router_logits, topk_weights * self.routed_scaling_factor, topk_indices

    return forward


@contextlib.contextmanager
def exact_routers() -> Iterator[Counter]:
    """Within the block, the float32 routers (:data:`SOFTMAX_ROUTERS`,
    :data:`SIGMOID_ROUTERS`) run in float64; yields the Counter of their calls."""
    calls: Counter = Counter()
    saved = []
    for family, name in {**SOFTMAX_ROUTERS, **SIGMOID_ROUTERS}.items():
        modeling = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
        router = getattr(modeling, name)
        make = _softmax_router_forward if family in SOFTMAX_ROUTERS else _sigmoid_router_forward
        saved.append((router, router.__dict__["forward"]))
        router.forward = make(calls)
    try:
        yield calls
    finally:
        for router, original in reversed(saved):
            router.forward = original


@contextlib.contextmanager
def exact_float64(families: tuple[str, ...] = ROTARY_FAMILIES) -> Iterator[Counter]:
    """Within the block, the RMSNorm, rotary embedding and eager attention of ``families``
    run wholly in float64. Yields a Counter of the patched calls (``rms_norm``, ``rotary``,
    ``softmax``); everything is restored on exit."""
    calls: Counter = Counter()
    saved: list[tuple[object, str, object]] = []

    def patch(owner, name: str, replacement) -> None:
        saved.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, replacement)

    try:
        for family in families:
            modeling = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
            stem = _STEMS[family]
            norm = _offset_rms_norm_forward if family in OFFSET_NORM_FAMILIES else _rms_norm_forward
            if hasattr(modeling, f"{stem}RMSNorm"):  # GPT-NeoX, Phi, StableLM: LayerNorm only
                patch(getattr(modeling, f"{stem}RMSNorm"), "forward", norm(calls))
            rotary = _layer_type_rotary_forward if family in LAYER_TYPE_ROPE_FAMILIES else None
            if family in HALF_ROTARY_FAMILIES:
                rotary = _half_rotary_forward
            rotary = rotary or _rotary_forward
            patch(getattr(modeling, f"{stem}RotaryEmbedding"), "forward", rotary(calls))
            own = modeling.eager_attention_forward
            eager = (
                _counted_attention(own, calls)
                if family in OWN_SOFTMAX_FAMILIES
                else _eager_attention(modeling, calls)
            )
            patch(modeling, "eager_attention_forward", eager)
            if family in SOFTMAX_ROUTERS:
                patch(
                    getattr(modeling, SOFTMAX_ROUTERS[family]),
                    "forward",
                    _softmax_router_forward(calls),
                )
            if family in SIGMOID_ROUTERS:
                patch(
                    getattr(modeling, SIGMOID_ROUTERS[family]),
                    "forward",
                    _sigmoid_router_forward(calls),
                )
        yield calls
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


@dataclass(frozen=True)
class Reference:
    """One float64 run of a checkpoint: attentions [layers, heads, n, n], hidden states
    [layers + 1, n, d] (the last at the input of the final norm, if the model has one) and
    logits [n, vocab]; ``calls`` counts the exact patches that ran (empty for stock)."""

    attentions: np.ndarray
    hidden: np.ndarray
    logits: np.ndarray
    calls: dict


def _model_class(folder: Path):
    """The transformers class named by the checkpoint's ``architectures``."""
    config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    return getattr(transformers, config["architectures"][0])


def _final_norm(model) -> nn.Module | None:
    """The decoder's final norm (Llama-family ``model.norm``, GPT-2 ``transformer.ln_f``);
    None for an encoder (BERT), whose last hidden state is the last layer's output."""
    base = model.base_model
    names = ("norm", "ln_f", "final_layer_norm", "final_layernorm")
    return next((getattr(base, n) for n in names if getattr(base, n, None) is not None), None)


def _has_experts(folder: Path) -> bool:
    """Whether the checkpoint is a mixture of experts: transformers' fused expert kernels
    refuse float64, so its plain expert loop (``experts_implementation="eager"``) runs."""
    config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    keys = ("num_experts", "num_local_experts", "n_routed_experts")
    return any(config.get(key) for key in keys)


def load_float64(folder: Path):
    """The checkpoint in ``folder`` as its transformers class, float64, eager attention."""
    cls = _model_class(folder)
    extra = {"experts_implementation": "eager"} if _has_experts(folder) else {}
    model = cls.from_pretrained(
        str(folder), dtype=torch.float64, attn_implementation="eager", **extra
    )
    return model.eval()


def forward_reference(model, ids) -> Reference:
    """Run ``model`` on ``ids`` (one text) and collect attentions, hidden states and logits."""
    seen: dict[str, np.ndarray] = {}
    norm = _final_norm(model)
    hook = None
    if norm is not None:
        hook = norm.register_forward_pre_hook(
            lambda module, args: seen.__setitem__("final", args[0][0].detach().numpy().copy())
        )
    try:
        with torch.no_grad():
            out = model(
                input_ids=torch.tensor([list(ids)]),
                output_attentions=True,
                output_hidden_states=True,
                use_cache=False,
            )
    finally:
        if hook is not None:
            hook.remove()
    hidden = [h[0].numpy() for h in out.hidden_states]
    if norm is not None:  # transformers' last entry is after the final norm: use its input
        hidden[-1] = seen["final"]
    return Reference(
        attentions=np.stack([a[0].numpy() for a in out.attentions]),
        hidden=np.stack(hidden),
        logits=out.logits[0].numpy(),
        calls={},
    )


def run_reference(folder: Path, ids, exact: bool = True) -> Reference:
    """transformers' float64 eager run of the checkpoint in ``folder`` on token ``ids``:
    with the float32 steps patched to float64 (``exact``, the parity reference) or stock."""
    if not exact:
        return forward_reference(load_float64(folder), ids)
    with exact_float64() as calls:
        reference = forward_reference(load_float64(folder), ids)
    return Reference(reference.attentions, reference.hidden, reference.logits, dict(calls))


# ---------------------------------------------------------------- sharp query/key weights


_PROJECTIONS = (
    "self_attn.q_proj.weight",
    "self_attn.q_proj.bias",
    "self_attn.k_proj.weight",
    "self_attn.k_proj.bias",
    "attention.self.query.weight",
    "attention.self.query.bias",
    "attention.self.key.weight",
    "attention.self.key.bias",
    "attention.q_lin.weight",
    "attention.q_lin.bias",
    "attention.k_lin.weight",
    "attention.k_lin.bias",
)
_QK_NORMS = ("self_attn.q_norm.weight", "self_attn.k_norm.weight")


def _fused_rows(name: str, rows: int, config: dict) -> tuple | None:
    """The index of the query and key rows of a fused ``[out, in]`` projection (or its bias):
    GPT-NeoX's ``query_key_value`` (per head [q, k, v]) and Phi-3's ``qkv_proj`` (all q, all
    k, all v), DeepSeek-V3's (:func:`_latent_rows`); None for any other tensor."""
    latent = _latent_rows(name, rows, config)
    if latent is not None:
        return latent
    heads = config.get("num_attention_heads", 1)
    d_k = config.get("head_dim") or config.get("hidden_size", 0) // heads
    if name.endswith(("attention.query_key_value.weight", "attention.query_key_value.bias")):
        return (torch.arange(rows) % (3 * d_k) < 2 * d_k,)
    if name.endswith(("self_attn.qkv_proj.weight", "self_attn.qkv_proj.bias")):
        kv = config.get("num_key_value_heads") or heads
        return (slice(0, (heads + kv) * d_k),)
    return None


def _latent_rows(name: str, rows: int, config: dict) -> tuple | None:
    """DeepSeek-V3's query and key parts: all of ``q_b_proj`` (``q_proj`` is a plain
    projection), each head's k_nope rows of ``kv_b_proj`` and the rotary key's rows of
    ``kv_a_proj_with_mqa`` (an RMSNorm follows ``q_a_proj`` and the latent, so scaling those
    would change nothing); None for any other tensor."""
    if name.endswith("self_attn.q_b_proj.weight"):
        return (...,)
    if name.endswith("self_attn.kv_b_proj.weight"):
        nope, v = config.get("qk_nope_head_dim", 128), config.get("v_head_dim", 128)
        return (torch.arange(rows) % (nope + v) < nope,)
    if name.endswith(("self_attn.kv_a_proj_with_mqa.weight", "self_attn.kv_a_proj_with_mqa.bias")):
        return (slice(config.get("kv_lora_rank", 512), None),)
    return None


def _folder_config(folder: Path) -> dict:
    return json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))


def query_key_parts(tensors: dict, config: dict | None = None) -> dict:
    """{name: index} of the parts of ``tensors`` (checkpoint or parameter names) that scale
    a query or a key: the QK-norm weights where there are some (Qwen3: a norm after the
    projection would undo their scale), else Llama-family ``q_proj``/``k_proj`` and BERT
    ``query``/``key`` (whole weights and biases) and GPT-2's fused ``c_attn`` (the first two
    thirds of its outputs, the last axis of a Conv1D weight)."""
    if any(name.endswith(_QK_NORMS) for name in tensors):
        return {name: (...,) for name in tensors if name.endswith(_QK_NORMS)}
    parts = {name: (...,) for name in tensors if name.endswith(_PROJECTIONS)}
    for name, tensor in tensors.items():
        if name.endswith(("attn.c_attn.weight", "attn.c_attn.bias")):
            parts[name] = (..., slice(0, 2 * tensor.shape[-1] // 3))
        rows = _fused_rows(name, tensor.shape[0], config or {})
        if rows is not None:
            parts[name] = rows
    return parts


def mean_row_max(attentions: np.ndarray) -> float:
    """The mean over heads and query rows of each row's largest weight (rows after the
    first: a causal model's first row is always 1)."""
    return float(attentions[:, 1:, :].max(axis=-1).mean())


#: model_types whose QK-norm multiplies by ``1 + w``: sharpening scales ``1 + w``, not ``w``.
OFFSET_QK_NORM_TYPES = ("gemma3_text",)


def _qk_offset(folder: Path) -> float:
    """1 for a checkpoint whose QK-norm weights are offsets from 1 (Gemma 3), else 0."""
    config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    return 1.0 if config.get("model_type") in OFFSET_QK_NORM_TYPES else 0.0


def sharp_factor(folder: Path, ids, target: float = 0.6, steps: int = 12) -> float:
    """The factor for the query and key projections at which layer 0's mean row max is
    ``target``: bisection on log(factor) in [1/64, 64] (scores scale as factor²)."""
    offset = _qk_offset(folder)
    model = load_float64(folder)
    params = dict(model.named_parameters())
    parts = [
        (params[name], index, params[name].detach().clone())
        for name, index in query_key_parts(params, _folder_config(folder)).items()
    ]
    if not parts:
        raise ValueError(f"no query/key projections found in {folder}")

    def peak(factor: float) -> float:
        with torch.no_grad():
            for param, index, original in parts:
                param.copy_(original)
                param[index] = (param[index] + offset) * factor - offset
        return mean_row_max(forward_reference(model, ids).attentions[0])

    low, high = math.log(1 / 64), math.log(64.0)
    for _ in range(steps):
        middle = (low + high) / 2
        low, high = (middle, high) if peak(math.exp(middle)) < target else (low, middle)
    return math.exp((low + high) / 2)


def scale_query_key(folder: Path, factor: float) -> int:
    """Multiply the query and key parts (:func:`query_key_parts`) of every safetensors file
    in ``folder`` by ``factor``, in place; returns how many tensors changed."""
    changed, offset = 0, _qk_offset(folder)
    for path in sorted(Path(folder).glob("*.safetensors")):
        tensors = load_file(str(path))
        for name, index in query_key_parts(tensors, _folder_config(folder)).items():
            tensors[name][index] = (tensors[name][index] + offset) * factor - offset
            changed += 1
        save_file(tensors, str(path), metadata={"format": "pt"})
    return changed


def sharpen(folder: Path, ids, target: float = 0.6) -> float:
    """Scale the checkpoint's query and key projections so that layer 0's attention rows
    peak near ``target`` on ``ids`` (as in trained models); returns the factor used."""
    factor = sharp_factor(folder, ids, target)
    if scale_query_key(folder, factor) == 0:
        raise ValueError(f"no query/key tensors in the files of {folder}")
    return factor
