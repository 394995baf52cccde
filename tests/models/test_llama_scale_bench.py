"""The scale benchmark's random checkpoints: transformers' exact tensor names and shapes, bf16
and sharded, and they load and run through the model run."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.diagnostics import llama_scale_bench as bench
from attention_explorer.pretrained import model_run
from tests.models.conftest import tiny_scale_config

TINY = tiny_scale_config("qwen2.5-0.5b")


def test_tiny_checkpoint_is_sharded_bf16_and_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "SHARD_BYTES", 8 * 1024)
    size = bench.write_checkpoint(tmp_path, TINY)
    assert size == 2 * sum(int(np.prod(s)) for s in bench.tensor_shapes(TINY).values())
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
    config.pop("head_dim", None)
    kind = {"qwen2": "Qwen2", "llama": "Llama"}[config["model_type"]]
    cfg = getattr(transformers, f"{kind}Config")(
        **{k: v for k, v in config.items() if k not in ("qkv_bias", "architectures")}
    )
    with __import__("torch").device("meta"):
        model = getattr(transformers, f"{kind}ForCausalLM")(cfg)
    theirs = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    if cfg.tie_word_embeddings:
        theirs.pop("lm_head.weight", None)
    assert bench.tensor_shapes(config) == theirs
