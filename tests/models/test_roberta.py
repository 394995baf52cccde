"""RoBERTa (issue 28): BERT's layout under ``roberta.``, positions counted from
``padding_idx + 1`` with pad tokens at ``padding_idx``, and its own LM head (``lm_head``:
dense, exact GELU, layer_norm, decoder and bias), against transformers in float64; a
knockout and an edit; refusals by name. Mild and sharp parity on both backends is in
``test_exact_parity.py``."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tokenizers import Tokenizer  # noqa: E402

from attention_explorer.pretrained import model_run  # noqa: E402
from attention_explorer.pretrained.model_errors import ModelError  # noqa: E402
from tests.models import exact_reference  # noqa: E402
from tests.models.conftest import (  # noqa: E402
    assert_like_reference,
    check_knockout_and_edit,
    random_checkpoint,
)

TEXT = "The cat sat on the mat because it was"
SIZES = dict(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    max_position_embeddings=40,
)


def _roberta(folder, bert_folder, **changes):
    return random_checkpoint(
        folder,
        "RobertaConfig",
        "RobertaForMaskedLM",
        tokenizer=bert_folder / "tokenizer.json",
        **{**SIZES, **changes},
    )


@pytest.fixture(scope="module")
def roberta(tmp_path_factory, bert_folder):
    return _roberta(tmp_path_factory.mktemp("roberta"), bert_folder)


def test_positions_skip_the_pad_token_wherever_it_is(tmp_path, bert_folder):
    """With ``pad_token_id`` the id of "cat" (inside the text), transformers gives that token
    position ``padding_idx`` and counts the others from ``padding_idx + 1``: the run matches
    only if the positions do."""
    tokenizer = Tokenizer.from_file(str(bert_folder / "tokenizer.json"))
    cat = tokenizer.token_to_id("cat")
    folder = _roberta(tmp_path, bert_folder, pad_token_id=cat, max_position_embeddings=256)
    run = model_run(folder, TEXT, dtype="float64")
    assert cat in list(run.ids)
    assert_like_reference(run, exact_reference.run_reference(folder, list(run.ids)))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_knockout_and_an_edit_match(roberta, backend):
    name = "roberta.encoder.layer.0.attention.output.dense.weight"
    check_knockout_and_edit(roberta, TEXT, name, 8, backend)


def test_an_untied_head_and_a_relu_feed_forward_match(tmp_path, bert_folder):
    """The head's GELU is fixed (the feed-forward's ``hidden_act`` is relu here) and the
    decoder is its own tensor."""
    folder = _roberta(tmp_path, bert_folder, tie_word_embeddings=False, hidden_act="relu")
    run = model_run(folder, TEXT, dtype="float64")
    worst = assert_like_reference(run, exact_reference.run_reference(folder, list(run.ids)))
    assert worst < 1e-9


def test_the_text_fits_the_positions_after_the_offset(tmp_path, bert_folder):
    folder = _roberta(tmp_path, bert_folder, max_position_embeddings=12)
    with pytest.raises(ModelError, match="10 positions"):  # pad 1: 10 of the 12 rows
        model_run(folder, TEXT)  # 11 tokens


def test_relative_positions_are_refused_by_name(roberta, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(roberta, folder)
    config = json.loads((folder / "config.json").read_text())
    config["position_embedding_type"] = "relative_key"
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="position_embedding_type"):
        model_run(folder, TEXT)
    assert np.isfinite(model_run(roberta, TEXT).logits).all()


def test_roberta_weights_labelled_bert_are_named_for_their_layout(roberta, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(roberta, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="bert", architectures=["BertForMaskedLM"])
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError) as err:
        model_run(folder, TEXT)
    message = str(err.value)
    assert "the tensors follow the RoBERTa encoders (roberta) layout" in message, message
    assert "set it to 'roberta'" in message and "roberta.embeddings" in message, message
    assert "has no weight" not in message, message
