"""The cache arithmetic (generation/cache_size.py) against the bytes of the arrays an
``ae.generate`` cache holds: GPT-2 (multi-head), a Llama with grouped-query attention, a
Mistral with a sliding window; and DeepSeek-V3's published shape from transformers' config."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.generation import GenerationError
from attention_explorer.generation.cache_size import (
    CacheShape,
    bytes_per_token,
    held_bytes,
    held_positions,
    numbers_per_token,
)
from attention_explorer.pretrained.open_model import load_model
from tests.generation.conftest import PROMPT, TINY

STEPS = 5


def test_the_arithmetic_agrees_with_gpt2s_cache_arrays(gpt2_folder):
    shape = CacheShape.of_model(load_model(gpt2_folder))
    assert (shape.layers, shape.heads, shape.kv_heads, shape.head_dim) == (3, 4, 4, 8)
    assert shape.design == "mha"
    for dtype in ("float32", "float64"):
        out = ae.generate(gpt2_folder, PROMPT, STEPS, dtype=dtype)
        fed = out.prompt_length + STEPS - 1
        size = bytes_per_token(shape, dtype)
        for layer in out.cache:
            assert layer.keys.shape[1] == fed
            assert size.per_layer == (layer.keys.nbytes + layer.values.nbytes) // fed
            assert size.per_layer == layer.bytes_per_position
        assert size.all_layers * fed == out.cache_bytes == held_bytes(shape, fed, dtype)
        # multi-head attention is GPT-2's own; multi-query attention holds one head of 4
        assert bytes_per_token(shape, dtype, "mha").per_layer == size.per_layer
        assert bytes_per_token(shape, dtype, "gqa", groups=1).per_layer * 4 == size.per_layer


def test_grouped_query_attention_holds_kv_heads_not_heads(llama_gen):
    shape = CacheShape.of_model(load_model(llama_gen))
    assert (shape.heads, shape.kv_heads, shape.design) == (4, 2, "gqa")
    out = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64")
    fed = out.prompt_length + STEPS - 1
    own = bytes_per_token(shape, "float64")
    assert own.per_layer * fed == out.cache[0].nbytes
    assert own.all_layers * fed == out.cache_bytes
    assert out.cache[0].keys.shape[0] == shape.kv_heads
    # the same width under multi-head attention holds twice as much; under multi-query half
    assert bytes_per_token(shape, "float64", "mha").all_layers == 2 * own.all_layers
    assert bytes_per_token(shape, "float64", "gqa", groups=1).per_layer * 2 == own.per_layer
    assert bytes_per_token(shape, "float64", "gqa", groups=2).per_layer == own.per_layer
    gqa4 = bytes_per_token(shape, "float64", "gqa", groups=4)  # 4 groups of 1: multi-head
    assert gqa4.all_layers == bytes_per_token(shape, "float64", "mha").all_layers


def test_a_sliding_layer_holds_window_minus_one_positions(mistral_gen):
    shape = CacheShape.of_model(load_model(mistral_gen))
    assert shape.windows == (3, 3)
    out = ae.generate(mistral_gen, PROMPT, STEPS, dtype="float32")
    fed = out.prompt_length + STEPS - 1
    assert held_positions(shape, fed) == [len(layer.positions) for layer in out.cache] == [2, 2]
    assert held_bytes(shape, fed, "float32") == out.cache_bytes


def test_the_shipped_tiny_induction_model():
    shape = CacheShape.of_model(load_model(TINY))
    out = ae.generate(TINY, "cat dog fox", 4)
    fed = out.prompt_length + 3
    assert bytes_per_token(shape, "float32").all_layers * fed == out.cache_bytes
    assert bytes_per_token(shape).per_layer == 2 * 64 * 4  # 1 head of 64: a key and a value


def test_deepseek_v3s_published_shape_from_transformers_config():
    transformers = pytest.importorskip("transformers")
    config = transformers.DeepseekV3Config().to_dict()
    shape = CacheShape.deepseek(config)
    assert shape.latent and shape.layers == 61 and shape.head_dim == 128 + 64
    assert shape.design == "mla" and CacheShape(1, 4, 1, 8, 8).design == "mqa"
    assert numbers_per_token(shape) == 512 + 64  # the latent and the shared rotary key
    assert numbers_per_token(shape, "mha") == 128 * (192 + 128)
    assert numbers_per_token(shape, "gqa", groups=8) == 8 * (192 + 128)
    bf16 = bytes_per_token(shape, "bfloat16")
    assert (bf16.per_layer, bf16.all_layers) == (1152, 1152 * 61)
    assert bytes_per_token(shape, "bfloat16", "mha").all_layers == 81920 * 61


def test_dtypes_by_name_numpy_and_torch():
    shape = CacheShape(2, 4, 2, 8, 8)
    assert bytes_per_token(shape, np.dtype("float16")).per_layer == 2 * 16 * 2
    assert bytes_per_token(shape, "float8_e4m3fn").all_layers == 2 * 16 * 2
    torch = pytest.importorskip("torch")
    assert bytes_per_token(shape, torch.bfloat16).dtype == "bfloat16"


def test_bad_sizes_are_refused_in_one_line():
    shape = CacheShape(2, 4, 2, 8, 8)
    with pytest.raises(GenerationError, match="do not divide into 3 groups"):
        bytes_per_token(shape, "float32", "gqa", groups=3)
    with pytest.raises(GenerationError, match="no latent"):
        bytes_per_token(shape, "float32", "mla")
    with pytest.raises(GenerationError, match="'int7' is not one of"):
        bytes_per_token(shape, "int7")
    with pytest.raises(GenerationError, match="attention 'x'"):
        numbers_per_token(shape, "x")
    with pytest.raises(GenerationError, match="4 heads do not divide into 3 kv heads"):
        CacheShape(2, 4, 3, 8, 8)
    with pytest.raises(GenerationError, match="needs both"):
        CacheShape(2, 4, 4, 8, 8, kv_lora_rank=16)


def test_ae_cache_size_prices_a_folder_a_shape_and_a_config(llama_gen):
    size = ae.cache_size(llama_gen, "float64")
    out = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64")
    fed = out.prompt_length + STEPS - 1
    assert size.held(fed) == out.cache_bytes == size.own.all_layers * fed
    assert size.mha.per_layer == 2 * size.own.per_layer and size.mla is None
    assert size.gqa(1).numbers == 1 * 2 * 8
    latent = ae.cache_size(
        {
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "qk_nope_head_dim": 8,
            "qk_rope_head_dim": 4,
            "v_head_dim": 8,
            "kv_lora_rank": 16,
        }
    )
    assert latent.own.all_layers == latent.mla.all_layers and latent.mla.per_layer == (16 + 4) * 4
    assert latent.mha.numbers == 4 * (12 + 8)
    assert ae.cache_size(CacheShape(1, 2, 1, 4, 4), "float16").own.all_layers == 16
    with pytest.raises(GenerationError, match="needs num_attention_heads.*kv_lora_rank"):
        ae.cache_size({"num_hidden_layers": 2})


TINY_DEEPSEEK = {
    "vocab_size": 64,
    "hidden_size": 32,
    "intermediate_size": 48,
    "moe_intermediate_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "q_lora_rank": None,
    "kv_lora_rank": 16,
    "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 4,
    "v_head_dim": 8,
    "first_k_dense_replace": 2,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "n_group": 1,
    "topk_group": 1,
    "max_position_embeddings": 64,
}


def test_the_latent_arithmetic_agrees_with_transformers_deepseek_cache():
    """transformers' DeepSeek-V3 caches the compressed latent and the rotary key (its
    cache's keys [1, 1, n, kv_lora_rank] and values [1, 1, n, rope]): their bytes per token
    are the latent price, far under multi-head attention's."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = transformers.DeepseekV3Config(**TINY_DEEPSEEK)
    torch.manual_seed(0)
    model = transformers.DeepseekV3ForCausalLM(config).eval().to(torch.float64)
    n = 5
    with torch.no_grad():
        cache = model(torch.arange(1, n + 1)[None], use_cache=True).past_key_values
    size = ae.cache_size(config.to_dict(), "float64")
    held = 0
    for layer in cache.layers:
        assert tuple(layer.keys.shape) == (1, 1, n, 16)  # the latent
        assert tuple(layer.values.shape) == (1, 1, n, 4)  # the rotary key
        per_layer = (layer.keys.numel() + layer.values.numel()) * layer.keys.element_size()
        assert per_layer == size.mla.per_layer * n == size.own.per_layer * n
        held += per_layer
    assert held == size.held(n) == size.mla.all_layers * n
    assert size.mha.numbers == 4 * (8 + 4 + 8) and size.mla.numbers == 16 + 4


def test_a_deepseek_generations_latent_cache_holds_the_latent_price(deepseek_gen):
    """The generation's own steps on a tiny DeepSeek-V3 (those Stepper.step runs): each
    layer's ``.latent [positions, kv_lora_rank]`` and ``.rope_key [positions, rope]`` hold
    exactly the latent price of ae.cache_size, and the keys and values up-projected from
    them for the views hold the multi-head price."""
    from tests.generation.test_latent_cache import greedy

    size = ae.cache_size(deepseek_gen, "float64")
    assert size.shape.design == "mla" and size.own.numbers == 16 + 8
    _, _, cache, n = greedy(deepseek_gen, STEPS)
    fed = n + STEPS - 1
    for layer in cache:
        assert layer.latent.shape == (fed, 16) and layer.rope_key.shape == (fed, 8)
        assert layer.latent.nbytes + layer.rope_key.nbytes == size.own.per_layer * fed
        assert layer.nbytes == size.own.per_layer * fed  # what the cache view reports
        assert layer.bytes_per_position == size.own.per_layer
        assert layer.keys.nbytes + layer.values.nbytes == size.mha.per_layer * fed
    assert sum(layer.nbytes for layer in cache) == size.held(fed) == size.own.all_layers * fed


def test_ae_generate_on_deepseek_holds_the_latent_price(deepseek_gen):
    size = ae.cache_size(deepseek_gen, "float64")
    out = ae.generate(deepseek_gen, PROMPT, STEPS, dtype="float64")
    fed = out.prompt_length + STEPS - 1
    assert out.cache_bytes == size.held(fed) == size.own.all_layers * fed


def test_gpt_oss_alternating_sliding_layers_hold_what_the_arithmetic_says(tmp_path):
    """Helper B's tiny gpt-oss: grouped-query attention, a sliding layer beside a full one
    (the sink logits cache nothing)."""
    pytest.importorskip("transformers")
    from tests.models.test_gpt_oss import make_gpt_oss

    folder = make_gpt_oss(tmp_path)
    size = ae.cache_size(folder, "float64")
    assert size.shape.design == "gqa" and size.shape.windows[1] is None
    out = ae.generate(folder, PROMPT, STEPS, dtype="float64")
    fed = out.prompt_length + STEPS - 1
    held = held_positions(size.shape, fed)
    assert held == [len(layer.positions) for layer in out.cache] and held[0] < held[1] == fed
    assert out.cache_bytes == size.held(fed)


@pytest.mark.parametrize("positions", [-3, 2.5, True])
def test_held_bytes_of_an_impossible_count_is_one_line(positions):
    shape = CacheShape(layers=2, heads=4, kv_heads=2, head_dim=8, v_head_dim=8)
    with pytest.raises(GenerationError, match="positions must be a whole number >= 0"):
        held_bytes(shape, positions)
