"""The shapes of real 0.5B-1B checkpoints for the scale benchmark
(:mod:`.llama_scale_bench`): each model's config.json values that size its tensors, and every
tensor's transformers name and shape."""

from __future__ import annotations

#: Shapes of the real models (their config.json values that size the tensors).
SIZES = {
    "qwen2.5-0.5b": {
        "model_type": "qwen2",
        "architectures": ["Qwen2ForCausalLM"],
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "qkv_bias": True,
    },
    "llama-3.2-1b": {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 32.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "qkv_bias": False,
    },
    "qwen3-0.6b": {
        "model_type": "qwen3",
        "architectures": ["Qwen3ForCausalLM"],
        "hidden_size": 1024,
        "intermediate_size": 3072,
        "num_hidden_layers": 28,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "qkv_bias": False,
    },
    "gemma-3-1b": {
        "model_type": "gemma3_text",
        "architectures": ["Gemma3ForCausalLM"],
        "hidden_size": 1152,
        "intermediate_size": 6912,
        "num_hidden_layers": 26,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 256,
        "vocab_size": 262144,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0,
        "sliding_window": 512,
        "layer_types": [
            "full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(26)
        ],
        "query_pre_attn_scalar": 256,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True,
        "hidden_activation": "gelu_pytorch_tanh",
        "qkv_bias": False,
    },
}

#: The norms around each layer's sublayers, by model_type: Llama's two, or Gemma's four
#: (a norm after each sublayer too); QK-norm's per-head weights where the family has them.
LAYER_NORMS = {
    "gemma3_text": (
        "input_layernorm",
        "post_attention_layernorm",
        "pre_feedforward_layernorm",
        "post_feedforward_layernorm",
    ),
}
QK_NORM_TYPES = ("qwen3", "gemma3_text")
LAYER_NORMS_DEFAULT = ("input_layernorm", "post_attention_layernorm")


def tensor_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor of a Llama-layout checkpoint with ``config``'s sizes, by its
    transformers name (``model.layers.N.self_attn.q_proj.weight``…)."""
    d, ff = config["hidden_size"], config["intermediate_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    d_k = config.get("head_dim") or d // heads
    shapes = {"model.embed_tokens.weight": (config["vocab_size"], d)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        norms = LAYER_NORMS.get(config["model_type"], LAYER_NORMS_DEFAULT)
        shapes |= {p + f"{name}.weight": (d,) for name in norms}
        shapes |= {
            p + "self_attn.q_proj.weight": (heads * d_k, d),
            p + "self_attn.k_proj.weight": (kv * d_k, d),
            p + "self_attn.v_proj.weight": (kv * d_k, d),
            p + "self_attn.o_proj.weight": (d, heads * d_k),
            p + "mlp.gate_proj.weight": (ff, d),
            p + "mlp.up_proj.weight": (ff, d),
            p + "mlp.down_proj.weight": (d, ff),
        }
        if config["model_type"] in QK_NORM_TYPES:
            shapes |= {p + f"self_attn.{name}.weight": (d_k,) for name in ("q_norm", "k_norm")}
        if config.get("qkv_bias"):
            for name, width in (("q", heads * d_k), ("k", kv * d_k), ("v", kv * d_k)):
                shapes[p + f"self_attn.{name}_proj.bias"] = (width,)
    shapes["model.norm.weight"] = (d,)
    if not config.get("tie_word_embeddings"):
        shapes["lm_head.weight"] = (config["vocab_size"], d)
    return shapes
