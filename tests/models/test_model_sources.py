"""Where models come from: a folder, the local Hugging Face cache, the packaged MiniLM."""

from __future__ import annotations

import shutil

from attention_explorer.pretrained import from_model, load_model, resolve_model
from attention_explorer.pretrained.checkpoint.source import REQUIRED_FILES


def test_hub_id_found_in_the_local_cache(tmp_path, gpt2_folder, monkeypatch):
    cache = tmp_path / "hub"
    snapshot = cache / "models--someone--tiny-gpt2" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    for name in REQUIRED_FILES:
        shutil.copy(gpt2_folder / name, snapshot / name)
    (cache / "models--someone--tiny-gpt2" / "refs").mkdir()
    (cache / "models--someone--tiny-gpt2" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    assert resolve_model("someone/tiny-gpt2") == snapshot
    session = from_model("someone/tiny-gpt2", "the cat", layer=2)
    assert session.name == "someone/tiny-gpt2, layer 2"
    assert session.experiment["model"]["layer"] == 2


def test_packaged_minilm_by_id(minilm_folder):
    for model_id in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        assert resolve_model(model_id) == minilm_folder
    loaded = load_model("all-MiniLM-L6-v2")
    assert loaded.weights.n_layers == 6 and loaded.weights.heads == 12
    assert load_model("all-MiniLM-L6-v2") is loaded  # read once, then kept


def test_session_records_where_it_came_from(gpt2_folder):
    session = from_model(gpt2_folder, "the cat sat", layer=1)
    assert "Layer 1 of" in session.description and "ln_1" in session.description
    assert session.experiment["model"] == {
        "name": gpt2_folder.name,
        "folder": str(gpt2_folder.resolve()),
        "text": "the cat sat",
        "layer": 1,
    }


def test_packaged_folder_given_as_a_path_keeps_the_model_name(minilm_folder):
    assert from_model(minilm_folder, "The cat sat.").name == "all-MiniLM-L6-v2, layer 0"
