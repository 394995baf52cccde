"""Faithful or refused: a checkpoint whose tensors disagree with its config.json is refused
naming the tensor and the key (transformers drops an unexpected bias with a load-report line
and fills a missing one with zeros, so neither reading is the model its author trained);
BERT's untied decoder bias and a base model with no output head read as transformers does."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_explorer.pretrained import ModelError, model_run
from tests.models.test_llama_family import TEXT, assert_parity, make_checkpoint

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _edit_config(folder, **changes) -> None:
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))


def _edit_tensors(folder, add=None, drop=()) -> None:
    """Add tensors to (or drop them from) the folder's model.safetensors."""
    from safetensors.numpy import load_file, save_file

    path = folder / "model.safetensors"
    tensors = {k: v for k, v in load_file(str(path)).items() if k not in drop}
    tensors.update(add or {})
    save_file(tensors, str(path), metadata={"format": "pt"})


def _refusal(folder) -> str:
    with pytest.raises(ModelError) as caught:
        model_run(folder, TEXT, dtype="float64")
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_llama_with_every_bias_matches_transformers(tmp_path):
    make_checkpoint(tmp_path, "llama", attention_bias=True, mlp_bias=True)
    run, _ = assert_parity(tmp_path, "llama")
    assert run.logits is not None


@pytest.mark.parametrize(
    ("family", "made", "config", "tensor", "said"),
    [
        # biases written, then attention_bias set false: transformers drops them (UNEXPECTED)
        (
            "llama",
            {"attention_bias": True},
            {"attention_bias": False},
            "_proj.bias",
            "attention_bias=false",
        ),
        ("llama", {"mlp_bias": True}, {"mlp_bias": False}, "_proj.bias", "mlp_bias=false"),
        # Qwen2 weights (q, k, v biases) labelled llama
        (
            "qwen2",
            {},
            {"model_type": "llama", "architectures": ["LlamaForCausalLM"]},
            "q_proj.bias",
            "attention_bias=false",
        ),
        # a Mistral checkpoint with biases: Mistral layers have none
        ("llama", {"attention_bias": True}, {"model_type": "mistral"}, "_proj.bias", "Mistral"),
        # the config promises biases the file lacks
        ("llama", {}, {"attention_bias": True}, "o_proj.bias", "attention_bias=true"),
        ("llama", {}, {"mlp_bias": True}, "up_proj.bias", "mlp_bias=true"),
        # Llama weights (no bias) labelled qwen2, whose q, k and v always have one
        ("llama", {}, {"model_type": "qwen2"}, "q_proj.bias", "Qwen2"),
    ],
    ids=[
        "llama-attention-bias-false",
        "llama-mlp-bias-false",
        "qwen2-as-llama",
        "mistral-with-biases",
        "llama-attention-bias-missing",
        "llama-mlp-bias-missing",
        "llama-as-qwen2",
    ],
)
def test_bias_tensors_that_disagree_with_the_config_are_refused_by_name(
    tmp_path, family, made, config, tensor, said
):
    make_checkpoint(tmp_path, family, **made)
    _edit_config(tmp_path, **config)
    message = _refusal(tmp_path)
    assert tensor in message and said in message, message
    assert "model.layers.0." in message  # the tensor's name as stored


def test_an_rmsnorm_with_a_bias_is_refused_by_name(tmp_path):
    make_checkpoint(tmp_path, "llama")
    _edit_tensors(tmp_path, add={"model.norm.bias": np.ones(32, np.float32)})
    message = _refusal(tmp_path)
    assert "model.norm.bias" in message and "RMSNorm" in message, message


def _bert_logits(folder, ids):
    """BertForMaskedLM's logits ``[n, vocab]`` of the saved folder, in float64."""
    model = transformers.BertForMaskedLM.from_pretrained(
        folder, dtype=torch.float64, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].numpy()


@pytest.fixture
def untied_bert(bert_folder, tmp_path):
    """The random BERT saved untied, its decoder weight and both biases all different."""
    model = transformers.BertForMaskedLM.from_pretrained(bert_folder, tie_word_embeddings=False)
    head = model.cls.predictions
    torch.manual_seed(3)
    with torch.no_grad():
        head.bias.copy_(torch.randn_like(head.bias))
        head.decoder.bias.copy_(torch.randn_like(head.decoder.bias))
        head.decoder.weight.add_(torch.randn_like(head.decoder.weight))
    model.save_pretrained(tmp_path, safe_serialization=True)
    (tmp_path / "tokenizer.json").write_bytes((bert_folder / "tokenizer.json").read_bytes())
    return tmp_path


@pytest.mark.parametrize(
    ("tied", "drop"),
    [
        (False, ()),
        (True, ()),  # both biases stored with different values: transformers unties them
        (True, ("cls.predictions.bias", "cls.predictions.decoder.weight")),
        (True, ("cls.predictions.decoder.bias", "cls.predictions.decoder.weight")),
    ],
    ids=["untied", "tied-both-stored", "tied-decoder-bias-only", "tied-bias-only"],
)
def test_bert_prediction_head_matches_transformers(untied_bert, tied, drop):
    _edit_config(untied_bert, tie_word_embeddings=tied)
    _edit_tensors(untied_bert, drop=drop)
    run = model_run(untied_bert, TEXT, dtype="float64")
    theirs = _bert_logits(untied_bert, list(run.ids))
    assert run.logits.shape == theirs.shape
    np.testing.assert_allclose(run.logits, theirs, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "missing", ["cls.predictions.decoder.bias", "cls.predictions.decoder.weight"]
)
def test_an_untied_bert_head_missing_its_own_tensor_is_refused(untied_bert, missing):
    _edit_tensors(untied_bert, drop=(missing,))  # transformers would fill it: zeros, or random
    message = _refusal(untied_bert)
    assert missing in message and "tie_word_embeddings=false" in message, message


@pytest.mark.parametrize("tied", [False, True])
def test_a_base_model_without_an_output_head(tmp_path, tied):
    """A LlamaModel saved alone: untied it has no head (logits None); tied, the word table is
    its head, as LlamaForCausalLM reads the same folder."""
    model = make_checkpoint(tmp_path, "llama", tie_word_embeddings=tied)
    for path in tmp_path.glob("*.safetensors"):
        path.unlink()
    model.model.save_pretrained(tmp_path, safe_serialization=True)  # no lm_head.weight
    _edit_config(tmp_path, tie_word_embeddings=tied)
    run = model_run(tmp_path, TEXT, dtype="float64")
    base = transformers.LlamaModel.from_pretrained(
        tmp_path, dtype=torch.float64, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        out = base(torch.tensor([list(run.ids)]), output_hidden_states=True)
    hidden = np.stack([h[0].numpy() for h in out.hidden_states])  # [L+1, n, d]
    np.testing.assert_allclose(run.hidden[:-1], hidden[:-1], rtol=0, atol=1e-6)
    if not tied:
        assert run.logits is None and "no output head" in run.output_note
        assert model_run(tmp_path, TEXT, backend="torch").logits is None
        with pytest.raises(ModelError, match="no output head"):
            run.top_tokens()
        return
    causal = transformers.LlamaForCausalLM.from_pretrained(
        tmp_path, dtype=torch.float64, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        logits = causal(torch.tensor([list(run.ids)])).logits[0].numpy()
    np.testing.assert_allclose(run.logits, logits, rtol=0, atol=1e-6)


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_an_lm_head_with_a_bias_is_refused_by_name(tmp_path, family):
    make_checkpoint(tmp_path, family)
    vocab = json.loads((tmp_path / "config.json").read_text())["vocab_size"]
    _edit_tensors(tmp_path, add={"lm_head.bias": np.ones(vocab, np.float32)})
    message = _refusal(tmp_path)
    assert "lm_head.bias" in message and "no output bias" in message, message
