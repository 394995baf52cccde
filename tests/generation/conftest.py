"""Models for the generation tests: the random GPT-2 of tests/models/conftest.py, a random
Llama with grouped-query attention (4 heads, 2 key/value heads), a Mistral with a 3-token
sliding window, a Qwen3 (QK-norm) and the shipped tiny-induction; transformers' float64
greedy generation (its float32 steps patched: exact_float64) as the reference."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.models.conftest import gpt2_folder  # noqa: F401  (a fixture, used by name)

TINY = Path(__file__).resolve().parents[2] / "resources" / "models" / "tiny-induction"
PROMPT = "The cat sat on the mat"


def tiny_words() -> list[str]:
    """tiny-induction's words in id order (no special tokens)."""
    vocab = json.loads((TINY / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
    return [w for w, _ in sorted(vocab.items(), key=lambda kv: kv[1]) if not w.startswith("[")]


@pytest.fixture(scope="session")
def llama_gen(tmp_path_factory) -> Path:
    """A random 2-layer Llama (4 heads sharing 2 key/value heads, RMSNorm, RoPE)."""
    pytest.importorskip("transformers")
    from tests.models.test_llama_family import make_checkpoint

    folder = tmp_path_factory.mktemp("llama-gen")
    make_checkpoint(folder, "llama")
    return folder


@pytest.fixture(scope="session")
def deepseek_gen(tmp_path_factory) -> Path:
    """A tiny DeepSeek-V3 (tests/models/test_deepseek_v3.py: kv_lora 16, q_lora 24, rope 8,
    4 heads) whose layer 1 routes to experts; built once for every generation test."""
    pytest.importorskip("transformers")
    from tests.models.test_deepseek_v3 import make_deepseek

    return make_deepseek(tmp_path_factory.mktemp("deepseek-gen"), first_k_dense_replace=1)


@pytest.fixture(scope="session")
def mistral_gen(tmp_path_factory) -> Path:
    """A random 2-layer Mistral whose layers see 3 keys back (sliding_window 3)."""
    pytest.importorskip("transformers")
    from tests.models.test_llama_family import make_checkpoint

    folder = tmp_path_factory.mktemp("mistral-gen")
    make_checkpoint(folder, "mistral", sliding_window=3)
    return folder


def run_over_ids(folder, ids, dtype: str = "float64"):
    """``ae.model_run`` over exactly ``ids`` (a byte-level BPE's decoded text does not always
    tokenize back to the same ids, so the ids are handed to the model's token cache under a
    text of their own, which is the key ``LoadedModel.tokenize`` looks up first)."""
    import attention_explorer as ae
    from attention_explorer.pretrained.checkpoint.tokenize import Tokens
    from attention_explorer.pretrained.open_model import load_model

    loaded = load_model(folder)
    key = "\x00ids:" + ",".join(map(str, ids))
    loaded.cast[("tokens", key)] = Tokens(tuple(map(str, ids)), tuple(ids), (0,) * len(ids))
    return ae.model_run(loaded, key, dtype=dtype)


def hf_generate(folder, ids, steps: int):
    """transformers' greedy generation in exact float64: (ids, the DynamicCache)."""
    import torch

    from tests.models.exact_reference import exact_float64, load_float64

    model = load_float64(folder)
    prompt = torch.tensor([list(ids)])
    with exact_float64(), torch.no_grad():
        out = model.generate(
            prompt,
            attention_mask=torch.ones_like(prompt),
            do_sample=False,
            max_new_tokens=steps,
            min_new_tokens=steps,
            eos_token_id=None,
            pad_token_id=0,
            return_dict_in_generate=True,
        )
    return out.sequences[0].tolist(), out.past_key_values


def cache_arrays(cache, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """Layer ``layer``'s keys and values of a transformers cache, ``[kv, positions, d]``."""
    entry = cache.layers[layer]
    return entry.keys[0].numpy(), entry.values[0].numpy()
