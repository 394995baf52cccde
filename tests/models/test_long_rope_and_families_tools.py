"""The families of issue 28 helper B added (GPT-NeoX, Phi, Phi-3, StableLM, RoBERTa,
DistilBERT, Llama with yarn) through the other entry points: ``model_attention`` gives the
model run's weights on numpy and torch, float32 runs stay within 1e-4 of float64, and the
knockout sweep measures every head."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from attention_explorer.pretrained import knockout_sweep, model_attention, model_run  # noqa: E402
from tests.models.conftest import random_checkpoint  # noqa: E402

TEXT = "The cat sat on the mat because it was"
DECODER = dict(
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=2,
    num_attention_heads=4,
    max_position_embeddings=64,
)
#: name -> (config class, model class, config, reads the WordPiece tokenizer)
CASES = {
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", {**DECODER, "rotary_pct": 0.5}, False),
    "phi": ("PhiConfig", "PhiForCausalLM", {**DECODER, "num_key_value_heads": 2}, False),
    "phi3": (
        "Phi3Config",
        "Phi3ForCausalLM",
        {
            **DECODER,
            "partial_rotary_factor": 0.5,
            "original_max_position_embeddings": 8,
            "rope_scaling": {
                "type": "longrope",
                "short_factor": [1.0, 2.0],
                "long_factor": [1.0, 3.0],
            },
            **dict.fromkeys(("bos_token_id", "eos_token_id", "pad_token_id"), 0),
        },
        False,
    ),
    "stablelm": (
        "StableLmConfig",
        "StableLmForCausalLM",
        {**DECODER, "num_key_value_heads": 2, "use_parallel_residual": True},
        False,
    ),
    "llama-yarn": (
        "LlamaConfig",
        "LlamaForCausalLM",
        {
            **DECODER,
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 16,
            },
        },
        False,
    ),
    "roberta": (
        "RobertaConfig",
        "RobertaForMaskedLM",
        {**DECODER, "max_position_embeddings": 40},
        True,
    ),
    "distilbert": (
        "DistilBertConfig",
        "DistilBertForMaskedLM",
        dict(dim=32, hidden_dim=48, n_layers=2, n_heads=4, max_position_embeddings=40),
        True,
    ),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory, bert_folder):
    made = {}
    for name, (config_class, model_class, config, wordpiece) in CASES.items():
        folder = tmp_path_factory.mktemp(name)
        tokenizer = bert_folder / "tokenizer.json" if wordpiece else None
        made[name] = random_checkpoint(folder, config_class, model_class, tokenizer, **config)
    return made


@pytest.mark.parametrize("name", list(CASES))
def test_model_attention_the_float32_run_and_the_sweep(folders, name):
    folder = folders[name]
    exact = model_run(folder, TEXT, dtype="float64")
    for backend in ("numpy", "torch"):
        weights, tokens = model_attention(folder, TEXT, backend=backend)
        assert len(tokens) == len(exact.ids)
        np.testing.assert_allclose(weights, exact.attentions, rtol=0, atol=1e-12)
    fast = model_run(folder, TEXT)  # float32
    assert np.abs(fast.logits - exact.logits).max() < 1e-4 * max(1.0, np.abs(exact.logits).max())
    sweep = knockout_sweep(folder, TEXT)
    assert sweep.shape == (2, 4) and np.isfinite(sweep).all() and np.abs(sweep).max() > 0
