"""Issue 32, item 8 and issue 31, item 14: each problem with a model named for what it is.
A model id one letter short suggests the installed model; a missing absolute folder is "no
such folder"; an id that cannot be a hub id says so; an edit with the wrong head count, the
torch ``meta`` device and an export named like an existing folder are one line each."""

from __future__ import annotations

import pytest

import attention_explorer as ae
from attention_explorer.pretrained import ModelError, load_model, resolve_model
from attention_explorer.writing.output_policy import OutputRefused, with_default_suffix


@pytest.fixture
def hub(tmp_path, model, monkeypatch):
    """A cache holding ``someone/tiny-model-v2`` and a hub that cannot be reached."""
    import shutil

    repo = tmp_path / "hub" / "models--someone--tiny-model-v2"
    shutil.copytree(model, repo / "snapshots" / "abc")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    import huggingface_hub

    def offline(*_a, **_k):
        raise OSError("no network")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    return repo


@pytest.mark.parametrize("offline", [False, True])
def test_a_near_miss_suggests_the_installed_model(hub, monkeypatch, offline):
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError) as err:
        resolve_model("someone/tiny-model")
    assert "Did you mean 'someone/tiny-model-v2' (on this computer)?" in str(err.value)


def test_minilm_one_suffix_short(monkeypatch):
    try:
        resolve_model("all-MiniLM-L6-v2")
    except ModelError:
        pytest.skip("the packaged MiniLM is not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError) as err:
        resolve_model("all-MiniLM-L6")
    assert "Did you mean 'all-MiniLM-L6-v2'" in str(err.value)


def test_a_missing_absolute_folder_is_no_such_folder(hub):
    with pytest.raises(ModelError) as err:
        resolve_model("/nonexistent")
    assert str(err.value) == "no such folder: /nonexistent"


@pytest.mark.parametrize("text", ["sentence-transformers/..", "a/../b", "-x", "x--y", "a b"])
def test_an_id_that_cannot_be_a_hub_id(hub, text):
    with pytest.raises(ModelError) as err:
        resolve_model(text)
    message = str(err.value)
    assert "not a valid Hugging Face id" in message or "no such folder" in message
    assert "download" not in message


def test_an_edit_with_another_head_count_is_one_line(model):
    session = ae.from_model(model, "the cat sat", layer=1)  # 2 heads of d_k 4
    one_head = ae.resize(session, heads=1)
    with pytest.raises(ModelError) as err:
        ae.model_run(model, "the cat sat", edits={1: one_head})
    assert "has 1 heads; layer 1 of" in str(err.value) and "has 2" in str(err.value)


def test_the_meta_device_is_one_line(model):
    pytest.importorskip("torch")
    with pytest.raises(ValueError) as err:  # the backend parser's AttentionInputError
        ae.model_run(load_model(model), "the cat", backend="torch:meta")
    assert "'meta' is not a device torch can compute on" in str(err.value)
    assert "\n" not in str(err.value)


def test_a_name_of_an_existing_folder_is_not_given_a_suffix(tmp_path):
    (tmp_path / "figures").mkdir()
    with pytest.raises(OutputRefused) as err:
        with_default_suffix(tmp_path / "figures", ".png")
    assert "is a folder, not a file name" in str(err.value)
    assert with_default_suffix(tmp_path / "new", ".png").name == "new.png"
    assert with_default_suffix(tmp_path / "a.svg", ".png").name == "a.svg"
    assert not (tmp_path / "figures.png").exists()
