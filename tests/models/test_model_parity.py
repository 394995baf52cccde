"""Parity with transformers: the session of layer L reproduces the model's own attention
weights (every head, several layers) and the attention block's output before the residual."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.pretrained import from_model, model_attention

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEXT = "The cat sat on the mat because it was tired."
TOL = 1e-6


def reference(folder, text, ids, block_of):
    """transformers' attentions [layers, heads, n, n] and each layer's attention output."""
    model = transformers.AutoModel.from_pretrained(
        str(folder), attn_implementation="eager", dtype=torch.float64
    ).eval()
    outputs: dict[int, np.ndarray] = {}
    for i, block in enumerate(block_of(model)):
        block.register_forward_hook(
            lambda mod, inp, out, i=i: outputs.__setitem__(i, out.detach().numpy()[0])
        )
    with torch.no_grad():
        result = model(input_ids=torch.tensor([ids]), output_attentions=True)
    weights = np.stack([a[0].numpy() for a in result.attentions])  # [layers, heads, n, n]
    return weights, outputs


def check_layers(folder, text, ids, block_of, layers):
    weights, outputs = reference(folder, text, ids, block_of)
    for layer in layers:
        session = from_model(folder, text, layer=layer)
        trace = compute(session.inputs, session.config, dtype="float64")
        assert session.config.heads == weights.shape[1]
        np.testing.assert_allclose(trace.stages["weights"], weights[layer], rtol=0, atol=TOL)
        np.testing.assert_allclose(trace.stages["output"], outputs[layer], rtol=0, atol=TOL)
    every, _ = model_attention(folder, text)
    np.testing.assert_allclose(every, weights, rtol=0, atol=TOL)


def test_minilm_matches_transformers_every_head_and_layer(minilm_folder):
    tok = transformers.AutoTokenizer.from_pretrained(str(minilm_folder))
    ids = tok(TEXT)["input_ids"]
    session = from_model(minilm_folder, TEXT, layer=0)
    assert session.tokens == tuple(tok.convert_ids_to_tokens(ids))
    assert session.tokens[2] == "cat" and "[PAD]" not in session.tokens
    assert session.config.heads == 12 and session.config.d_model == 384
    assert session.config.mask == "none"

    def blocks(model):
        return [layer.attention.output.dense for layer in model.encoder.layer]

    check_layers(minilm_folder, TEXT, ids, blocks, layers=(0, 2, 5))


def test_small_gpt2_matches_transformers(gpt2_folder):
    from tokenizers import Tokenizer

    text = "the cat watched the dog"
    encoding = Tokenizer.from_file(str(gpt2_folder / "tokenizer.json")).encode(text)
    session = from_model(gpt2_folder, text, layer=1)
    assert session.tokens == tuple(t.removeprefix("Ġ") for t in encoding.tokens)  # shown readably
    assert session.config.mask == "causal" and session.config.heads == 4

    def blocks(model):
        return [block.attn.c_proj for block in model.h]

    check_layers(gpt2_folder, text, encoding.ids, blocks, layers=(0, 1, 2))


def test_small_bert_with_prefix_and_padding_matches(bert_folder):
    from tokenizers import Tokenizer

    text = "the cat sat on the mat"
    tokenizer = Tokenizer.from_file(str(bert_folder / "tokenizer.json"))
    tokenizer.no_padding()
    encoding = tokenizer.encode(text)
    session = from_model(bert_folder, text, layer=1)
    assert session.tokens == tuple(encoding.tokens)  # the file pads to 64: no [PAD] here
    assert session.tokens[0] == "[CLS]" and session.tokens[-1] == "[SEP]"

    def blocks(model):
        return [layer.attention.output.dense for layer in model.encoder.layer]

    check_layers(bert_folder, text, encoding.ids, blocks, layers=(0, 1))


def test_torch_backend_gives_the_same_numbers(gpt2_folder):
    text = "the cat sat"
    on_numpy, tokens = model_attention(gpt2_folder, text)
    on_torch, tokens_torch = model_attention(gpt2_folder, text, backend="torch")
    assert tokens == tokens_torch
    np.testing.assert_allclose(on_torch, on_numpy, rtol=0, atol=1e-12)
    # the session's X differs from layer 0's (the forward pass really ran)
    x0 = from_model(gpt2_folder, text, layer=0).inputs.X
    x2 = from_model(gpt2_folder, text, layer=2, backend="torch").inputs.X
    assert x0.shape == x2.shape and not np.allclose(x0, x2)
