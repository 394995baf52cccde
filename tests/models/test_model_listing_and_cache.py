# ruff: noqa: F811 - the fixtures imported from test_llama_family are redefined as parameters
"""Item 4 of issue 28 on small random Llama checkpoints written by transformers: the model
cache sees every file loading reads, the listing refuses what opening refuses, and the
refusals say what is actually wrong."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.pretrained import ModelError, load_model, model_run

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.models.test_llama_family import (  # noqa: E402, F401 - fixtures pytest finds here
    llama_copy,
    llama_folder,
    make_checkpoint,
)

TEXT = "The cat sat on the mat."


def _rewrite_config(folder, **changes):
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))


def _logits(folder) -> np.ndarray:
    return np.asarray(model_run(folder, TEXT, dtype="float64").logits)


@pytest.mark.parametrize(
    "changes",
    [{"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}, {"rms_norm_eps": 0.25}],
    ids=["rope_theta", "eps"],
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


@pytest.fixture(scope="module")
def qwen2_folder(tmp_path_factory):
    """One random 2-layer Qwen2 checkpoint, written once for this module."""
    folder = tmp_path_factory.mktemp("qwen2")
    make_checkpoint(folder, "qwen2")
    return folder


def _listed(folder):
    """The entry ``ae.models`` gives ``folder``."""
    (entry,) = [e for e in ae.models([folder]) if e.where == "folder"]
    return entry


REFUSED = [
    ("llama", {"rope_scaling": {"rope_type": "proportional", "factor": 4.0}}, "proportional"),
    ("llama", {"rope_parameters": {"rope_type": "dynamic", "beta_fast": 2.0}}, "beta_fast"),
    ("llama", {"hidden_act": "relu2"}, "relu2"),
    ("llama", {"rms_norm_eps": 0}, "rms_norm_eps"),
    ("llama", {"model_type": "mamba"}, "mamba"),
    ("qwen2", {"use_sliding_window": "yes"}, "use_sliding_window"),
    ("qwen2", {"layer_types": ["sliding_attention", "full_attention"]}, "sliding_attention"),
]


@pytest.mark.parametrize(("family", "changes", "named"), REFUSED)
def test_the_listing_refuses_what_opening_refuses(
    tmp_path, llama_folder, qwen2_folder, family, changes, named
):
    folder = tmp_path / family
    shutil.copytree(llama_folder if family == "llama" else qwen2_folder, folder)
    entry = _listed(folder)
    assert entry.supported and entry.reason == "" and entry.family == family
    _rewrite_config(folder, **changes)
    with pytest.raises(ModelError, match=named) as err:
        model_run(folder, TEXT)
    entry = _listed(folder)
    assert not entry.supported and entry.reason == str(err.value), entry


def test_the_listing_reads_the_config_only(llama_copy):
    (llama_copy / "model.safetensors").write_bytes(b"not a checkpoint")
    entry = _listed(llama_copy)
    assert entry.supported and entry.family == "llama"
    (llama_copy / "config.json").write_text("{not json")
    entry = _listed(llama_copy)
    assert not entry.supported and "config.json" in entry.reason and entry.family == "unknown"


@pytest.mark.parametrize(
    ("config", "said", "unsaid"),
    [
        (
            {"model_type": "foo", "architectures": ["LlamaForCausalLM"]},
            ["model_type 'foo'", "LlamaForCausalLM (model_type 'llama')"],
            ["LlamaForCausalLM is not supported"],
        ),
        (
            {"model_type": "mamba2", "architectures": ["Mamba2ForCausalLM"]},
            ["model_type 'mamba2', which is not a supported family", "Mamba2ForCausalLM"],
            [],
        ),
        ({"architectures": ["BertModel"]}, ["no model_type", "model_type 'bert'"], []),
    ],
)
def test_an_unknown_family_says_what_is_wrong(config, said, unsaid):
    from attention_explorer.pretrained.families import architecture_for

    with pytest.raises(ModelError) as err:
        architecture_for(config)
    message = str(err.value)
    assert all(text in message for text in said), message
    assert not any(text in message for text in unsaid), message
    assert "Llama 2/3" in message and err.value.what == "architecture"


def test_a_boolean_refused_reads_as_config_json_writes_it():
    from attention_explorer.kernels.numpy_ops import ACTIVATIONS
    from attention_explorer.pretrained.architecture import check_config
    from attention_explorer.pretrained.families import FAMILIES

    with pytest.raises(ModelError) as err:
        check_config(FAMILIES["qwen3"], {"use_sliding_window": True}, ACTIVATIONS)
    message = str(err.value)
    assert "use_sliding_window true, which" in message and message.endswith("only false is")
    assert "supported: False" not in message


@pytest.mark.parametrize("key", ["rope_parameters", "rope_scaling"])
def test_a_rope_refusal_names_the_key_the_config_used(llama_copy, key):
    config = json.loads((llama_copy / "config.json").read_text())
    config.pop("rope_parameters", None)
    config.pop("rope_scaling", None)
    config[key] = {"rope_type": "proportional", "factor": 4.0, "rope_theta": 500.0}
    (llama_copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError) as err:
        model_run(llama_copy, TEXT)
    message = str(err.value)
    other = {"rope_parameters": "rope_scaling", "rope_scaling": "rope_parameters"}[key]
    assert f"config.json {key}: rope_type 'proportional' is not implemented" in message, message
    assert other not in message and "default, linear, llama3" in message
