"""Layers of Gemma 2 (soft cap, query_pre_attn_scalar, a local layer's window), Gemma 3
(QK-norm times 1 + w, local and global RoPE and windows), OLMo 2 (QK-norm over every head) and
SmolLM3 (a NoPE layer) open with ``from_model`` as projection sessions using the engine's new
stages, and computing them reproduces the layer: ``model_run`` to 1e-12, transformers (float64,
its float32 steps patched) to 1e-6, numpy and torch. A partial-rotary layer (GPT-NeoX, Phi) is
reproduced by the engine's rotary fraction too (the bridge's projection session)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.pretrained import from_model, model_run
from attention_explorer.pretrained.forward import attention_input, run_layers, scale_setting
from attention_explorer.pretrained.layer_parts import layer_view
from attention_explorer.pretrained.open_model import load_model
from attention_explorer.pretrained.rotary import rotary_parts
from tests.models.exact_reference import run_reference
from tests.models.test_gemma2_family import GEMMA2
from tests.models.test_gemma3_family import GEMMA3
from tests.models.test_gemma_common import TEXT, TOL, write_model
from tests.models.test_smollm3_family import SMOLLM3

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

FAMILIES = {
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", GEMMA2),
    "gemma3": ("Gemma3TextConfig", "Gemma3ForCausalLM", GEMMA3),  # local base 50, global 900 x4
    "olmo2": ("Olmo2Config", "Olmo2ForCausalLM", dict(eos_token_id=0)),
    "smollm3": ("SmolLM3Config", "SmolLM3ForCausalLM", SMOLLM3),  # layer 1 NoPE, windows 5
}

#: What each family's layers (0, 1) must set in the session.
EXPECTED = {
    "gemma2": [dict(softcap=4.0, window=5), dict(softcap=4.0, window=None)],
    "gemma3": [
        dict(qk_norm="rms_one_plus", window=5, rope_theta=50.0),
        dict(qk_norm="rms_one_plus", window=None, rope_theta=900.0, rope_scaling="linear"),
    ],
    "olmo2": [dict(qk_norm="rms", qk_norm_width="all")] * 2,
    "smollm3": [dict(positional="rope"), dict(positional="none")],
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """One random checkpoint per family, written once."""
    made = {}
    for name, (config, model, extra) in FAMILIES.items():
        made[name] = write_model(tmp_path_factory.mktemp(name), config, model, **extra)
    return made


@pytest.fixture(scope="module")
def references(folders):
    """transformers' exact float64 attentions of each checkpoint."""
    out = {}
    for name, folder in folders.items():
        run = model_run(folder, TEXT, dtype="float64")
        out[name] = (run, run_reference(folder, list(run.ids)).attentions)
    return out


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_layer_opens_in_projection_mode_and_reproduces_it(
    folders, references, family, backend
):
    run, attentions = references[family]
    for layer in (0, 1):
        session = from_model(folders[family], TEXT, layer=layer)
        config = session.config
        assert config.mode == "projection", session.description
        for key, value in EXPECTED[family][layer].items():
            assert getattr(config, key) == value, (family, layer, key)
        if config.qk_norm != "none":
            assert session.inputs.q_norm is not None and session.inputs.k_norm is not None
        trace = compute(session.inputs, config, backend=None if backend == "numpy" else _torch(),
                        dtype="float64")  # fmt: skip
        ours = np.asarray(trace.stages["weights"])  # [h, n, n]
        assert np.abs(ours - run.attentions[layer]).max() < 1e-12
        worst = float(np.abs(ours - attentions[layer]).max())
        print(f"{family} layer {layer} session on {backend}: {worst:.1e} to transformers")
        assert worst <= TOL


def _torch():
    from attention_explorer.engine import Backend

    return Backend("torch", "cpu")


def test_a_gemma2_session_without_its_cap_computes_other_weights(folders, references):
    run, _ = references["gemma2"]
    session = from_model(folders["gemma2"], TEXT, layer=0)
    uncapped = compute(session.inputs, session.config.with_changes(softcap=None), dtype="float64")
    assert np.abs(uncapped.stages["weights"] - run.attentions[0]).max() > 1e-4


@pytest.mark.parametrize("family", ["gpt_neox", "phi"])
def test_a_partial_rotary_layer_is_reproduced_by_the_engines_rotary_fraction(tmp_path, family):
    from tests.models.test_gpt_neox import _neox
    from tests.models.test_phi import _phi

    folder = (_neox if family == "gpt_neox" else _phi)(tmp_path)
    run = model_run(folder, TEXT, dtype="float64")
    loaded = load_model(folder)
    w = loaded.weights
    ids = loaded.tokenize(TEXT)
    for layer in (0, 1):
        h, _ = run_layers(w, ids.ids, ids.type_ids, layer, None, False)
        view = layer_view(w, layer)
        x = attention_input(w, layer, h)
        config, inputs = rotary_parts(view, layer, x, scale_setting(w.scales[layer], w.d_k))
        assert config.mode == "projection" and config.rotary_fraction == 0.5
        trace = compute(inputs, config, dtype="float64")
        assert np.abs(trace.stages["weights"] - run.attentions[layer]).max() < 1e-12
        assert "does not turn" in _explain_last_dim(trace)
    session = from_model(folder, TEXT, layer=0)  # whichever mode it opens in, it says why
    assert session.config.mode == "projection" or "dimensions turn" in session.description


def _explain_last_dim(trace) -> str:
    from attention_explorer.engine.explain import explain

    return explain(trace, "Q_rot", 0, 2, trace.config.head_dim - 1).text()
