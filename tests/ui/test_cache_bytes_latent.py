"""The cache view's bytes sentence on a latent-attention model (DeepSeek-V3): its cache
holds one latent and one rotary key per token and layer, so the words price those and set
them beside full multi-head attention, instead of calling it multi-head because it has as
many K/V heads as query heads."""

from __future__ import annotations

import pytest

import attention_explorer as ae
from attention_explorer.ui.generate.cache_bytes import bytes_text, cache_bytes


@pytest.fixture(scope="module")
def deepseek(tmp_path_factory):
    """Helper C's tiny DeepSeek-V3 (kv_lora 16, rope 8, 4 heads)."""
    pytest.importorskip("transformers")
    from tests.models.test_deepseek_v3 import make_deepseek

    return make_deepseek(tmp_path_factory.mktemp("deepseek-bytes"), first_k_dense_replace=2)


def test_a_latent_cache_is_priced_as_the_latent_beside_multi_head(deepseek):
    gen = ae.generate(deepseek, "a b c", 3, dtype="float64")
    b = cache_bytes(_loaded(deepseek), gen)
    size = ae.cache_size(deepseek, "float64")
    assert b.latent == (16, 8)
    assert b.per_token == size.own.all_layers == b.layers * (16 + 8) * 8
    assert b.held == gen.cache_bytes  # what the arrays hold
    text = bytes_text(b, len(gen.steps) - 1)
    assert "16 latent + 8 rotary-key numbers" in text
    assert "This is full multi-head attention" not in text
    assert "(full multi-head attention:" in text  # the held bytes set beside MHA's


def _loaded(folder):
    from attention_explorer.pretrained.open_model import load_model

    return load_model(folder)
