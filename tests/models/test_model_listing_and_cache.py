"""Item 4 of issue 28 on small random Llama checkpoints written by transformers: the model
cache sees every file loading reads, the listing refuses what opening refuses, and the
refusals say what is actually wrong."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from attention_explorer.pretrained import load_model, model_run

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.models.test_llama_family import make_checkpoint  # noqa: E402

TEXT = "The cat sat on the mat."


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    """One random 2-layer Llama checkpoint, written once for this module."""
    folder = tmp_path_factory.mktemp("llama")
    make_checkpoint(folder, "llama")
    return folder


@pytest.fixture
def llama_copy(llama_folder, tmp_path):
    """A copy of the Llama checkpoint a test may change."""
    folder = tmp_path / "llama"
    shutil.copytree(llama_folder, folder)
    return folder


def _rewrite_config(folder, **changes):
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))


def _logits(folder) -> np.ndarray:
    return np.asarray(model_run(folder, TEXT, dtype="float64").logits)


@pytest.mark.parametrize(
    "changes", [{"rope_theta": 10000.0}, {"rms_norm_eps": 0.25}], ids=["rope_theta", "eps"]
)
def test_an_edited_config_is_read_again(llama_copy, changes):
    before = _logits(llama_copy)
    _rewrite_config(llama_copy, **changes)
    after = _logits(llama_copy)
    assert np.abs(after - before).max() > 1e-3
    fresh = shutil.copytree(llama_copy, llama_copy.parent / "fresh")  # never loaded before
    np.testing.assert_allclose(after, _logits(fresh), atol=1e-12)


def test_an_edited_tokenizer_is_read_again(llama_copy):
    from tokenizers import Tokenizer, normalizers

    before = load_model(llama_copy).tokenize(TEXT).tokens
    tokenizer = Tokenizer.from_file(str(llama_copy / "tokenizer.json"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.save(str(llama_copy / "tokenizer.json"))
    after = load_model(llama_copy).tokenize(TEXT).tokens
    assert "".join(before).startswith("The") and "".join(after).startswith("the"), after
