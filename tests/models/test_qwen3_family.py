"""Qwen3 (QK-norm) against transformers' ``Qwen3ForCausalLM`` (eager, float64) on tiny random
checkpoints written on the fly: attentions, hidden states and logits within 1e-6 through
``ae.model_run`` and ``ae.model_attention`` on numpy and torch, knockouts and an edit; a layer
opened by ``from_model`` is a direct-mode session (QK-norm is not a stage of the engine yet)
that reproduces the layer's attention; what Qwen3 support does not implement is refused by
name."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.pretrained import ModelError, from_model, model_attention, model_run
from tests.models.conftest import bpe_tokenizer
from tests.models.exact_reference import run_reference

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEXT = "The cat sat on the mat because it was tired and the dog watched it."
TOL = 1e-6
BACKENDS = ["numpy", "torch"] + (["torch:cuda"] if torch.cuda.is_available() else [])


def make_qwen3(folder, **extra):
    """A random 2-layer Qwen3 (hidden 64, 4 heads, 2 kv heads, head_dim 16) in ``folder``;
    projections scaled up and every norm weight (q_norm and k_norm included) moved off 1 so
    that attention is far from uniform and QK-norm matters."""
    vocab = bpe_tokenizer(folder)
    torch.manual_seed(0)
    sizes = dict(
        vocab_size=vocab,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=64,
        rms_norm_eps=1e-5,
        rope_theta=500.0,
        tie_word_embeddings=False,
    )
    config = transformers.Qwen3Config(**{**sizes, **extra})
    config._attn_implementation = "eager"
    model = transformers.Qwen3ForCausalLM(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0) if p.dim() == 2 else p.add_(0.5 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    return model


@pytest.fixture(scope="module")
def qwen3_folder(tmp_path_factory):
    """One random Qwen3 checkpoint for the tests that only read it."""
    folder = tmp_path_factory.mktemp("qwen3")
    make_qwen3(folder)
    return folder


@pytest.fixture
def qwen3_copy(qwen3_folder, tmp_path):
    """A copy of the Qwen3 checkpoint a test may change."""
    folder = tmp_path / "qwen3"
    shutil.copytree(qwen3_folder, folder)
    return folder


def reference(folder, ids, exact=True):
    """transformers' eager float64 run (``exact``: with its float32 steps in float64, see
    :func:`tests.models.exact_reference.exact_float64`): attentions [L, h, n, n], hidden
    [L+1, n, d], logits [n, vocab]."""
    ref = run_reference(folder, ids, exact)
    return ref.attentions, ref.hidden, ref.logits


def _worst(run, ref) -> float:
    """The largest difference of attentions, hidden states (but the last, which transformers
    reports after the final norm) and logits."""
    attentions, hidden, logits = ref
    assert run.attentions.shape == attentions.shape and run.hidden.shape == hidden.shape
    return max(
        float(np.abs(run.attentions - attentions).max()),
        float(np.abs(run.hidden[:-1] - hidden[:-1]).max()),
        float(np.abs(run.logits - logits).max()),
    )


@pytest.mark.parametrize(
    "extra",
    [{}, {"attention_bias": True, "tie_word_embeddings": True}],
    ids=["untied", "bias-tied"],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_qwen3_matches_transformers(tmp_path, extra, backend):
    make_qwen3(tmp_path, **extra)
    run = model_run(tmp_path, TEXT, dtype="float64", backend=backend)
    ref = reference(tmp_path, list(run.ids))
    worst = _worst(run, ref)
    stock = _worst(run, reference(tmp_path, list(run.ids), exact=False))
    print(
        f"parity qwen3 {sorted(extra)} on {backend}: {worst:.2e} (stock transformers {stock:.2e})"
    )
    assert worst <= TOL and stock <= 2e-6, (worst, stock)
    assert run.attentions[0].max() > 0.5  # far from uniform: QK-norm's weights are not 1
    attentions, _ = model_attention(tmp_path, TEXT, backend=backend)
    assert np.abs(attentions - ref[0]).max() <= TOL


def test_qk_norm_changes_the_numbers(qwen3_copy):
    """The parity above is not vacuous: with q_norm's weights doubled the attention moves."""
    from safetensors.numpy import load_file, save_file

    path = qwen3_copy / "model.safetensors"
    tensors = load_file(str(path))
    base = model_run(qwen3_copy, TEXT, dtype="float64")
    tensors["model.layers.0.self_attn.q_norm.weight"] *= 2.0
    save_file(tensors, str(path), metadata={"format": "pt"})
    moved = model_run(qwen3_copy, TEXT, dtype="float64")
    assert np.abs(moved.attentions[0] - base.attentions[0]).max() > 1e-2
    ref = reference(qwen3_copy, list(moved.ids))
    assert _worst(moved, ref) <= TOL


@pytest.mark.parametrize("backend", BACKENDS)
def test_knockout_and_edit_match_on_both_backends(qwen3_folder, backend):
    base = model_run(qwen3_folder, TEXT, dtype="float64", backend=backend)
    knocked = model_run(qwen3_folder, TEXT, dtype="float64", backend=backend, knockout=[(0, 1)])
    assert np.array_equal(knocked.attentions[0], base.attentions[0])
    assert np.abs(knocked.logits - base.logits).max() > 1e-3
    numpy_knocked = model_run(qwen3_folder, TEXT, dtype="float64", knockout=[(0, 1)])
    assert np.abs(knocked.logits - numpy_knocked.logits).max() < 1e-9
    session = from_model(qwen3_folder, TEXT, layer=0)
    same = model_run(qwen3_folder, TEXT, dtype="float64", backend=backend, edits={0: session})
    assert np.abs(same.logits - base.logits).max() < 1e-9
    k_norm = np.array(session.inputs.k_norm, dtype=np.float64)  # [d_k], shared by the heads
    k_norm[:4] *= 3.0  # QK-norm's weights on k's first four dimensions
    edited = replace(session, inputs=replace(session.inputs, k_norm=k_norm))
    moved = model_run(qwen3_folder, TEXT, dtype="float64", backend=backend, edits={0: edited})
    assert np.abs(moved.attentions[0] - base.attentions[0]).max() > 1e-3
    assert np.abs(moved.attentions[1] - base.attentions[1]).max() > 1e-6
    trace = compute(edited.inputs, edited.config, dtype="float64")
    assert np.abs(trace.stages["weights"] - moved.attentions[0]).max() < 1e-12


@pytest.mark.parametrize("layer", [0, 1])
def test_from_model_opens_qk_norm_layers_in_projection_mode(qwen3_folder, layer):
    session = from_model(qwen3_folder, TEXT, layer=layer)
    config, inputs = session.config, session.inputs
    assert config.mode == "projection" and config.positional == "rope"
    assert config.qk_norm == "rms"  # QK-norm is a stage: its weights are the session's
    assert np.shape(inputs.q_norm) == (16,) and np.shape(inputs.k_norm) == (16,)
    assert inputs.W_Q is not None and inputs.Q is None
    trace = compute(inputs, config, dtype="float64")
    run = model_run(qwen3_folder, TEXT, dtype="float64")
    assert np.abs(trace.stages["weights"] - run.attentions[layer]).max() < 1e-12
    ref = reference(qwen3_folder, list(run.ids))
    assert np.abs(trace.stages["weights"] - ref[0][layer]).max() <= TOL


def _rewrite_config(folder, **changes):
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"use_sliding_window": True, "sliding_window": 4}, "use_sliding_window"),
        ({"layer_types": ["full_attention", "sliding_attention"]}, "sliding_attention"),
        ({"rope_parameters": {"rope_type": "proportional", "factor": 4.0}}, "proportional"),
        ({"hidden_act": "relu2"}, "hidden_act"),
    ],
)
def test_config_keys_not_implemented_are_refused_by_name(qwen3_copy, changes, named):
    _rewrite_config(qwen3_copy, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(qwen3_copy, TEXT)


def _rewrite_tensors(folder, change):
    from safetensors.numpy import load_file, save_file

    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    change(tensors)
    save_file(tensors, str(path), metadata={"format": "pt"})


def test_missing_qk_norm_is_refused_by_name(qwen3_copy):
    _rewrite_tensors(qwen3_copy, lambda t: t.pop("model.layers.1.self_attn.k_norm.weight"))
    with pytest.raises(ModelError, match=r"layers\.1\.self_attn\.k_norm\.weight"):
        model_run(qwen3_copy, TEXT)


def test_a_qk_norm_bias_or_shape_is_refused_by_name(qwen3_copy, tmp_path):
    other = tmp_path / "shape"
    shutil.copytree(qwen3_copy, other)
    _rewrite_tensors(
        qwen3_copy,
        lambda t: t.update({"model.layers.0.self_attn.q_norm.bias": np.zeros(16, np.float32)}),
    )
    with pytest.raises(ModelError, match=r"q_norm\.bias"):
        model_run(qwen3_copy, TEXT)
    _rewrite_config(other, head_dim=8)
    with pytest.raises(ModelError, match=r"has shape"):
        model_run(other, TEXT)


def test_bias_against_the_config_is_refused_by_name(qwen3_copy):
    _rewrite_config(qwen3_copy, attention_bias=True)
    with pytest.raises(ModelError, match=r"o_proj\.bias.*attention_bias=true"):
        model_run(qwen3_copy, TEXT)


@pytest.mark.parametrize("family", ["llama", "mistral"])
def test_qwen3_weights_labelled_llama_are_refused(qwen3_copy, family):
    """QK-norm tensors in a family without QK-norm are named, never run without the norm."""
    _rewrite_config(qwen3_copy, model_type=family, architectures=["LlamaForCausalLM"])
    with pytest.raises(ModelError, match=r"layers\.0\.self_attn\.q_norm\.weight is present"):
        model_run(qwen3_copy, TEXT)
