"""The scale benchmark's random checkpoints: transformers' exact tensor names and shapes, bf16
and sharded, and they load and run through the model run."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.diagnostics import llama_scale_bench as bench
from attention_explorer.pretrained import model_run
from tests.models.conftest import tiny_scale_config


@pytest.mark.parametrize("name", ["qwen2.5-0.5b", "qwen3-0.6b", "gemma-3-1b"])
def test_tiny_checkpoint_is_sharded_bf16_and_runs(tmp_path, monkeypatch, name):
    monkeypatch.setattr(bench, "SHARD_BYTES", 8 * 1024)
    more = {"layer_types": ["sliding_attention", "full_attention"], "sliding_window": 4}
    tiny = tiny_scale_config(name, head_dim=8, **(more if name.startswith("gemma") else {}))
    size = bench.write_checkpoint(tmp_path, tiny)
    assert size == 2 * sum(int(np.prod(s)) for s in bench.tensor_shapes(tiny).values())
    assert len(list(tmp_path.glob("model-*-of-*.safetensors"))) > 1
    run = model_run(tmp_path, "the cat sat")
    assert run.attentions.shape == (2, 4, 11, 11) and run.logits.shape == (11, 300)
    assert np.isfinite(run.logits).all()


@pytest.mark.parametrize("name", sorted(bench.SIZES))
def test_names_and_shapes_are_transformers_own(name):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    config = {
        **bench.SIZES[name],
        "hidden_size": 64,
        "intermediate_size": 48,
        "num_hidden_layers": 2,
        "vocab_size": 100,
    }
    config["head_dim"] = 64 // config["num_attention_heads"]  # Qwen3 and Gemma default to 128, 256
    config.pop("layer_types", None)  # sized for the real depth; the default pattern serves
    config_class, model_class = {
        "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
        "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
        "llama": ("LlamaConfig", "LlamaForCausalLM"),
        "gemma3_text": ("Gemma3TextConfig", "Gemma3ForCausalLM"),
    }[config["model_type"]]
    cfg = getattr(transformers, config_class)(
        **{k: v for k, v in config.items() if k not in ("qkv_bias", "architectures")}
    )
    with __import__("torch").device("meta"):
        model = getattr(transformers, model_class)(cfg)
    theirs = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    if cfg.tie_word_embeddings:
        theirs.pop("lm_head.weight", None)
    assert bench.tensor_shapes(config) == theirs
