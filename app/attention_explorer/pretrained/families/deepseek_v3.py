"""DeepSeek-V3 (``DeepseekV3ForCausalLM``): the Llama layout (pre-RMSNorm, a SwiGLU
feed-forward, the final norm and the LM head, ``tie_word_embeddings`` false by default) with
multi-head latent attention (:mod:`attention_explorer.pretrained.latent`): q through the
``q_lora_rank`` (``q_a_proj``, ``q_a_layernorm``, ``q_b_proj``; ``q_proj`` when it is null),
one latent ``c_kv`` of ``kv_lora_rank`` numbers and one rotary key of ``qk_rope_head_dim`` per
token (``kv_a_proj_with_mqa``, ``kv_a_layernorm``), each head's key and value up-projected from
the latent (``kv_b_proj``), RoPE on the rotary parts only (interleaved pairs under
``rope_interleave``, the default), scores scaled by ``(qk_nope_head_dim +
qk_rope_head_dim) ** -0.5`` (times ``mscale(factor, mscale_all_dim)²`` under a scaled RoPE).

``attention_bias`` puts a bias on ``q_a_proj``, ``kv_a_proj_with_mqa`` and ``o_proj`` (as
transformers builds them); ``num_key_value_heads`` must equal ``num_attention_heads``; a
``quantization_config`` (the released FP8 weights) is refused by name. The latent norms' epsilon
is 1e-6 whatever ``rms_norm_eps`` says (transformers' ``DeepseekV3RMSNorm`` default).
Layers from ``first_k_dense_replace`` on are mixtures of experts (sigmoid scores, grouped top-k,
shared experts: :data:`attention_explorer.pretrained.experts.plans.DEEPSEEK_V3`).
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.experts.plans import DEEPSEEK_V3
from attention_explorer.pretrained.families import llama
from attention_explorer.pretrained.latent.plan import check_latent_config, latent_scale

_A = "layers.{i}.self_attn."

ARCHITECTURE = Architecture(
    family="deepseek_v3",
    label="DeepSeek-V3 decoders (deepseek_v3)",
    model_types=("deepseek_v3",),
    norm="rmsnorm",
    eps_key="rms_norm_eps",
    eps_default=1e-6,
    mlp="gated",
    activation_default="silu",
    positions="rotary",
    sizes={
        **{role: key for role, key in llama.LLAMA_SIZES.items() if role != "head_dim"},
        "max_positions": ("max_position_embeddings", 4096),
        "kv_lora": ("kv_lora_rank", 512),
        "nope_dim": ("qk_nope_head_dim", 128),
        "rope_dim": ("qk_rope_head_dim", 64),
        "v_dim": ("v_head_dim", 128),
    },
    tensors={
        **{role: name for role, name in llama.LLAMA_TENSORS.items() if role not in ("q", "k", "v")},
        "q": _A + "q_proj",
        "q_a": _A + "q_a_proj",
        "q_a_norm": _A + "q_a_layernorm",
        "q_b": _A + "q_b_proj",
        "kv_a": _A + "kv_a_proj_with_mqa",
        "kv_a_norm": _A + "kv_a_layernorm",
        "kv_b": _A + "kv_b_proj",
    },
    prefixes=("model.", ""),
    accepted={
        "tie_word_embeddings": (False, True),
        "attention_bias": (False, True),
        "rope_interleave": (True, False),
    },
    reads=("rope_theta", "rope_scaling", "rope_parameters", "q_lora_rank", "first_k_dense_replace"),
    head="lm",
    biases={
        **dict.fromkeys(("q", "q_b", "kv_b", "ffn_gate", "ffn_in", "ffn_out"), False),
        **dict.fromkeys(("q_a", "kv_a", "o"), "attention_bias"),
    },
    scale_rule=latent_scale,
    extra_check=check_latent_config,
    experts=DEEPSEEK_V3,
    latent=True,
)
