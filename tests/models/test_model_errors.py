"""Every way opening a model can go wrong gives one ModelError with a clear message."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from attention_explorer.pretrained import ModelError, from_model, model_attention, resolve_model
from attention_explorer.pretrained.checkpoint.source import REQUIRED_FILES


def copy_model(src, dst):
    """A copy of a model folder (a new path, so the load cache does not answer)."""
    dst.mkdir()
    for name in REQUIRED_FILES:
        shutil.copy(src / name, dst / name)
    return dst


def test_folder_with_missing_files_names_them(tmp_path, gpt2_folder):
    folder = tmp_path / "half"
    folder.mkdir()
    shutil.copy(gpt2_folder / "config.json", folder / "config.json")
    with pytest.raises(ModelError) as err:
        from_model(folder, "the cat")
    assert err.value.what == "files"
    assert "model.safetensors" in str(err.value) and "tokenizer.json" in str(err.value)
    assert "config.json," not in str(err.value).split("lacks")[1].split("(")[0]


def test_a_file_instead_of_a_folder(gpt2_folder):
    with pytest.raises(ModelError, match="is a file; a model is a folder"):
        from_model(gpt2_folder / "config.json", "the cat")


def test_unsupported_architecture_lists_the_supported_ones(tmp_path, gpt2_folder):
    folder = copy_model(gpt2_folder, tmp_path / "mamba")  # a family no record covers
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="mamba", architectures=["MambaForCausalLM"])
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError) as err:
        from_model(folder, "the cat")
    assert err.value.what == "architecture"
    assert "MambaForCausalLM" in str(err.value) and "Llama" in str(err.value)
    assert "BERT" in str(err.value) and "GPT-2" in str(err.value)


def test_text_longer_than_the_positions(gpt2_folder):
    long_text = " ".join(["the cat sat on the mat"] * 10)
    with pytest.raises(ModelError) as err:
        from_model(gpt2_folder, long_text)
    assert err.value.what == "text"
    assert "24 positions" in str(err.value)


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_text(gpt2_folder, text):
    with pytest.raises(ModelError, match="the text is empty"):
        from_model(gpt2_folder, text)
    with pytest.raises(ModelError, match="the text is empty"):
        model_attention(gpt2_folder, text)


@pytest.mark.parametrize("layer", [3, -1, True, 1.0])
def test_layer_out_of_range(gpt2_folder, layer):
    with pytest.raises(ModelError) as err:
        from_model(gpt2_folder, "the cat", layer=layer)
    assert err.value.what == "layer"
    assert "layers 0..2" in str(err.value)


@pytest.mark.parametrize("module", ["tokenizers"])  # safetensors files are read directly
def test_model_extra_not_installed(tmp_path, gpt2_folder, monkeypatch, module):
    folder = copy_model(gpt2_folder, tmp_path / f"no-{module}")
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError
    with pytest.raises(ModelError) as err:
        from_model(folder, "the cat")
    assert err.value.what == "extra"
    assert "attention-explorer[model]" in str(err.value)
    assert module.split(".")[0] in str(err.value)


def test_unknown_id_offline_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError) as err:
        resolve_model("someone/some-model")
    assert err.value.what == "source" and "local Hugging Face cache" in str(err.value)


def test_failed_download_says_offline(monkeypatch, tmp_path):
    hub = pytest.importorskip("huggingface_hub")

    def refuse(*args, **kwargs):
        raise OSError("no network")

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "snapshot_download", refuse)
    with pytest.raises(ModelError, match="are you offline"):
        resolve_model("someone/some-model")


def test_missing_path_is_not_taken_for_a_hub_id(tmp_path):
    with pytest.raises(ModelError, match="no such folder"):
        resolve_model(str(tmp_path / "a" / "b" / "c"))
