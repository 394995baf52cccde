"""DistilBERT (issue 28): its tensor names (q_lin, k_lin, v_lin, out_lin, sa_layer_norm,
ffn.lin1/lin2, output_layer_norm, vocab_transform/vocab_layer_norm/vocab_projector), sizes
(dim, n_heads, n_layers, hidden_dim) and fixed 1e-12 epsilon, against transformers in
float64; a knockout and an edit; refusals by name. Mild and sharp parity on both backends is
in ``test_exact_parity.py``."""

from __future__ import annotations

import json
import shutil

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from attention_explorer.pretrained import model_run  # noqa: E402
from attention_explorer.pretrained.model_errors import ModelError  # noqa: E402
from tests.models import exact_reference  # noqa: E402
from tests.models.conftest import (  # noqa: E402
    assert_like_reference,
    check_knockout_and_edit,
    random_checkpoint,
)

TEXT = "The cat sat on the mat because it was"
SIZES = dict(dim=32, hidden_dim=64, n_layers=2, n_heads=4, max_position_embeddings=40)


def _distilbert(folder, bert_folder, **changes):
    return random_checkpoint(
        folder,
        "DistilBertConfig",
        "DistilBertForMaskedLM",
        tokenizer=bert_folder / "tokenizer.json",
        **{**SIZES, **changes},
    )


@pytest.fixture(scope="module")
def distilbert(tmp_path_factory, bert_folder):
    return _distilbert(tmp_path_factory.mktemp("distilbert"), bert_folder)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_knockout_and_an_edit_match(distilbert, backend):
    name = "distilbert.transformer.layer.0.attention.out_lin.weight"
    check_knockout_and_edit(distilbert, TEXT, name, 8, backend)


def test_an_untied_projector_and_another_activation_match(tmp_path, bert_folder):
    folder = _distilbert(tmp_path, bert_folder, tie_word_embeddings=False, activation="relu")
    run = model_run(folder, TEXT, dtype="float64")
    assert_like_reference(run, exact_reference.run_reference(folder, list(run.ids)))


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"sinusoidal_pos_embds": True}, "sinusoidal_pos_embds"),
        ({"activation": "relu2"}, "activation"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(distilbert, tmp_path, changes, named):
    folder = tmp_path / "copy"
    shutil.copytree(distilbert, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))
    with pytest.raises(ModelError, match=named):
        model_run(folder, TEXT)
