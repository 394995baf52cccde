"""The architecture record: one file per family, a registry, config keys refused by name,
and keys that change the numbers implemented (checked against transformers in float64)."""

from __future__ import annotations

import importlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.kernels.numpy_activations import ACTIVATIONS, erf, gelu
from attention_explorer.pretrained import ModelError, model_attention
from attention_explorer.pretrained.architecture import TENSOR_ROLES, Architecture
from attention_explorer.pretrained.families import FAMILIES, architecture_for

MODELS = Path(__file__).resolve().parents[2] / "app" / "attention_explorer" / "pretrained"


def variant(src: Path, dst: Path, **changes) -> Path:
    """A copy of a model folder with some config.json values changed."""
    shutil.copytree(src, dst)
    config = json.loads((dst / "config.json").read_text())
    config.update(changes)
    (dst / "config.json").write_text(json.dumps(config))
    return dst


def test_every_family_is_one_file_with_a_complete_record():
    assert set(FAMILIES) == {
        *("bert", "gpt2", "llama", "qwen2", "qwen3", "mistral"),
        *("gemma", "gemma2", "gemma3", "olmo2", "smollm3"),
        *("gpt_neox", "phi", "phi3", "stablelm", "roberta", "distilbert"),
        *("gpt_oss", "deepseek_v3", "qwen3_moe", "olmoe"),
    }
    for key, arch in FAMILIES.items():
        assert isinstance(arch, Architecture) and arch.family == key
        folder = MODELS / "families"
        assert (folder / f"{key}.py").is_file() or (folder / "moe" / f"{key}.py").is_file()
        assert set(arch.tensors) <= set(TENSOR_ROLES)
        assert arch.norm in ("layernorm", "rmsnorm") and arch.norm_placement in (
            "pre",
            "post",
            "output",
        )
        assert arch.activation_default in ACTIVATIONS
        assert arch.eps_key in arch.read_keys() and arch.activation_key in arch.read_keys()
        assert architecture_for({"model_type": arch.model_types[0]}) is arch


def test_the_forward_pass_never_asks_for_a_family():
    for name in ("forward.py", "weights.py", "run.py"):
        path = MODELS / name
        if path.exists():
            text = path.read_text()
            assert "family ==" not in text and '"gpt2"' not in text and '"bert"' not in text


def test_unknown_model_type_lists_the_families():
    with pytest.raises(ModelError, match="GPT-2.*|BERT.*") as err:
        architecture_for({"model_type": "mamba", "architectures": ["MambaForCausalLM"]})
    assert "MambaForCausalLM" in str(err.value) and err.value.what == "architecture"


def test_erf_is_exact_in_float64_and_float32_close():
    x = np.linspace(-7, 7, 20001)  # [n]
    ref = np.array([math.erf(v) for v in x])
    assert np.abs(erf(x) - ref).max() < 1e-15
    assert np.abs(erf(x.astype(np.float32)) - ref).max() < 1e-6
    assert erf(x.astype(np.float32)).dtype == np.float32
    assert np.isnan(erf(np.array([np.nan]))[0]) and erf(np.array([np.inf]))[0] == 1.0
    g = gelu(np.array([-1.0, 0.0, 2.0]))
    np.testing.assert_allclose(g, [-0.15865525393145707, 0.0, 1.9544997361036416], atol=1e-15)


@pytest.mark.parametrize(
    ("family", "key", "value"),
    [
        ("bert", "position_embedding_type", "relative_key"),
        ("bert", "hidden_act", "mish"),
        ("gpt2", "activation_function", "gelu_10"),
    ],
)
def test_unimplemented_values_are_refused_by_name(
    tmp_path, gpt2_folder, bert_folder, family, key, value
):
    src = gpt2_folder if family == "gpt2" else bert_folder
    folder = variant(src, tmp_path / "m", **{key: value})
    with pytest.raises(ModelError) as err:
        model_attention(folder, "the cat sat")
    assert err.value.what == "config"
    assert key in str(err.value) and repr(value) in str(err.value)


torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def reference(folder: Path, ids):
    """transformers' attentions [layers, heads, n, n] and hidden states, eager float64."""
    model = transformers.AutoModel.from_pretrained(
        str(folder), attn_implementation="eager", dtype=torch.float64
    ).eval()
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    return np.stack([a[0].numpy() for a in out.attentions])


def our_ids(folder: Path, text: str):
    from attention_explorer.pretrained import load_model

    return list(load_model(folder).tokenize(text).ids)


@pytest.mark.parametrize(
    ("family", "changes"),
    [
        ("gpt2", {"scale_attn_weights": False}),
        ("gpt2", {"activation_function": "relu"}),
        ("gpt2", {"scale_attn_by_inverse_layer_idx": True}),
        ("bert", {"is_decoder": True}),
    ],
)
def test_keys_that_change_the_numbers_match_transformers(
    tmp_path, gpt2_folder, bert_folder, family, changes
):
    src = gpt2_folder if family == "gpt2" else bert_folder
    folder = variant(src, tmp_path / "m", **changes)
    text = "the cat sat on the mat"
    ours, _ = model_attention(folder, text)
    np.testing.assert_allclose(ours, reference(folder, our_ids(folder, text)), rtol=0, atol=1e-9)
    plain, _ = model_attention(src, text)
    assert np.abs(plain - ours).max() > 1e-3  # the key really changed the numbers


@pytest.mark.parametrize("size", [5, 65536 + 7, 3 * 65536])
def test_float32_gelu_in_blocks_matches_the_exact_one(size):
    x = np.random.default_rng(size).normal(0, 3, size).astype(np.float32)  # [size]
    exact = gelu(x.astype(np.float64))
    got = gelu(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.all(np.abs(got - exact) <= 1e-6 * np.maximum(1.0, np.abs(exact)))
    grid = gelu(x.reshape(-1, 1) if size % 2 else x.reshape(2, -1))
    np.testing.assert_array_equal(grid.reshape(-1), got)


def test_float32_gelu_at_the_edges():
    x = np.array([0.0, -0.0, 1e-30, -1e-30, 5.0, -5.0, 29.0, -29.0, 1e30, -1e30, np.inf, -np.inf])
    got = gelu(x.astype(np.float32))  # [12]
    exact = gelu(x[:9])
    assert got.dtype == np.float32
    assert np.all(np.abs(got[:9] - exact) <= 1e-6 * np.maximum(1.0, np.abs(exact)))
    assert got[9] == 0.0 and got[10] == np.inf and got[11] == 0.0  # never inf * 0 = NaN
    assert np.isnan(gelu(np.array([np.nan], np.float32))[0])
    big = np.array([3e38, -3e38, 2e19, -2e19, 1.0], np.float32)  # x + |x| and x·x overflow
    np.testing.assert_array_equal(gelu(big)[:4], [big[0], 0.0, big[2], 0.0])


def test_every_file_of_the_families_folder_is_a_registered_family():
    """A family is one file: the registry finds each module without a list kept by hand."""
    from pathlib import Path

    from attention_explorer.pretrained import families

    root = Path(families.__file__).parent
    files = sorted(p.relative_to(root).with_suffix("").parts for p in root.rglob("*.py"))
    records = [
        importlib.import_module(".".join((families.__name__, *parts))).ARCHITECTURE
        for parts in files
        if parts[-1] != "__init__"
    ]
    assert len(records) >= 5
    assert families.FAMILIES == {arch.family: arch for arch in records}
