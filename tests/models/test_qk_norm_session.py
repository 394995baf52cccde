"""A QK-norm layer (Qwen3) opened with ``from_model`` is a projection session using the
engine's QK-norm stage: its q_norm/k_norm weights are the session's (editable, saved and
loaded), and computing it reproduces the layer's attention weights and output (float64,
transformers with its float32 steps patched, 1e-6; ``model_run`` 1e-12) on numpy and torch;
an edit of q_norm moves the model run as editing the checkpoint's q_norm moves transformers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.engine import compute
from attention_explorer.pretrained import from_model, model_run
from attention_explorer.session.file_format import dumps_session, loads_session
from tests.models.exact_reference import exact_float64
from tests.models.test_qwen3_family import TEXT, TOL, make_qwen3, reference

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def qwen3(tmp_path_factory):
    """One random Qwen3 checkpoint (QK-norm weights off 1, sharp attention)."""
    folder = tmp_path_factory.mktemp("qwen3-session")
    make_qwen3(folder)
    return folder


def _layer_output(folder, ids, layer):
    """transformers' float64 attention output of ``layer`` (o_proj, before the residual)."""
    import transformers

    model = transformers.Qwen3ForCausalLM.from_pretrained(
        folder, dtype=torch.float64, attn_implementation="eager"
    ).eval()
    caught = {}
    hook = model.model.layers[layer].self_attn.register_forward_hook(
        lambda _m, _i, out: caught.update(out=out[0])
    )
    with torch.no_grad(), exact_float64():  # RMSNorm, RoPE angles and softmax in float64
        model(torch.tensor([ids]), use_cache=False)
    hook.remove()
    return caught["out"][0].numpy()  # [n, d]


@pytest.mark.parametrize("layer", [0, 1])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_qwen3_layer_opens_in_projection_mode_and_reproduces_the_layer(qwen3, layer, backend):
    session = ae.from_model(qwen3, TEXT, layer=layer)
    config, inputs = session.config, session.inputs
    assert config.mode == "projection" and config.positional == "rope"
    assert config.qk_norm == "rms" and config.qk_norm_width == "head"
    assert config.qk_norm_eps == 1e-5
    assert inputs.q_norm.shape == (16,) and inputs.k_norm.shape == (16,)
    assert "direct mode" not in session.description
    trace = ae.compute(session, backend=backend, dtype="float64")
    assert trace.has("Q_normed") and trace.has("K_normed") and trace.has("Q_rot")
    run = model_run(qwen3, TEXT, dtype="float64")
    ours = np.asarray(trace.stages["weights"])  # [h, n, n]
    assert np.abs(ours - run.attentions[layer]).max() < 1e-12
    attentions, _, _ = reference(qwen3, list(run.ids))
    output = _layer_output(qwen3, list(run.ids), layer)
    worst = max(
        float(np.abs(ours - attentions[layer]).max()),
        float(np.abs(np.asarray(trace.stages["output"]) - output).max()),
    )
    print(f"qwen3 layer {layer} session on {backend}: {worst:.2e} against transformers")
    assert worst <= 1e-12  # exact: the same float64 arithmetic
    assert ours.max() > 0.5  # sharp: QK-norm's weights matter


def test_the_qk_norm_stage_is_what_the_scores_read(qwen3):
    session = from_model(qwen3, TEXT, layer=0)
    trace = compute(session.inputs, session.config, dtype="float64")
    q = np.asarray(trace.stages["Q"])  # [h, n, d_k]
    rms = np.sqrt((q * q).mean(axis=-1, keepdims=True) + session.config.qk_norm_eps)
    expected = q / rms * session.inputs.q_norm
    assert np.abs(np.asarray(trace.stages["Q_normed"]) - expected).max() < 1e-12
    without = compute(session.inputs, replace(session.config, qk_norm="none"), dtype="float64")
    assert np.abs(without.stages["weights"] - trace.stages["weights"]).max() > 1e-2


def test_editing_q_norm_moves_the_model_run_and_the_session_saves_and_loads(qwen3):
    session = from_model(qwen3, TEXT, layer=0)
    q_norm = np.array(session.inputs.q_norm)
    q_norm[3] *= 2.5
    edited = replace(session, inputs=session.inputs.with_changes(q_norm=q_norm))
    base = model_run(qwen3, TEXT, dtype="float64")
    moved = model_run(qwen3, TEXT, dtype="float64", edits={0: edited})
    trace = compute(edited.inputs, edited.config, dtype="float64")
    assert np.abs(trace.stages["weights"] - moved.attentions[0]).max() < 1e-12
    assert np.abs(moved.attentions[0] - base.attentions[0]).max() > 1e-3
    # the checkpoint edited the same way gives the same run (transformers' reference)
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(qwen3 / "model.safetensors"))
    name = "model.layers.0.self_attn.q_norm.weight"
    tensors[name] = tensors[name].copy()
    tensors[name][3] *= 2.5
    changed = qwen3.parent / "qwen3-edited"
    import shutil

    shutil.copytree(qwen3, changed, dirs_exist_ok=True)
    save_file(tensors, str(changed / "model.safetensors"), metadata={"format": "pt"})
    attentions, _, _ = reference(changed, list(moved.ids))
    assert np.abs(moved.attentions[0] - attentions[0]).max() <= TOL
    plain = replace(edited, experiment={})  # a plain session file: the numbers themselves
    again = loads_session(dumps_session(plain))
    assert again.config == plain.config
    assert np.array_equal(again.inputs.q_norm, q_norm)
    assert np.array_equal(again.inputs.k_norm, session.inputs.k_norm)


def test_a_model_session_with_an_edited_q_norm_saves_by_reference(qwen3, tmp_path):
    session = from_model(qwen3, TEXT, layer=1)
    k_norm = np.array(session.inputs.k_norm)
    k_norm[0] = -0.75
    edited = replace(session, inputs=session.inputs.with_changes(k_norm=k_norm))
    path = tmp_path / "edited.json"
    ae.save(edited, path)
    assert '"model"' in path.read_text()  # by reference: the model and the changed cells
    again = ae.load(path)
    assert np.array_equal(again.inputs.k_norm, k_norm)
    assert again.config == edited.config
