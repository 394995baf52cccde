"""The model run on torch (``backend="torch"``): its primitives against numpy's, the weights
shared with numpy on the cpu, reuse after an edit, the sweep, and clear refusals. Parity
with transformers on every family is in test_model_run.py and test_llama_family.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attention_explorer.kernels.numpy_ops import ACTIVATIONS, layer_norm, rms_norm
from attention_explorer.pretrained import ModelError, from_model, load_model, model_run

torch = pytest.importorskip("torch")
tk = pytest.importorskip("attention_explorer.kernels.torch_ops")
tw = pytest.importorskip("attention_explorer.pretrained.torch_weights")

TEXT = "the cat watched the dog sat on the mat"


def test_every_activation_has_a_torch_twin_with_the_same_numbers():
    assert set(tk.ACTIVATIONS) == set(ACTIVATIONS)
    x = np.linspace(-12.0, 12.0, 2001)  # [2001] float64
    for name, numpy_act in ACTIVATIONS.items():
        ours = tk.ACTIVATIONS[name](torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(ours, numpy_act(x), rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", ["layernorm", "rmsnorm"])
def test_norms_match_numpys(name):
    rng = np.random.default_rng(0)
    x, gamma, beta = rng.normal(size=(7, 16)), rng.normal(size=16), rng.normal(size=16)
    numpy_norm = {"layernorm": layer_norm, "rmsnorm": rms_norm}[name]
    for b in (beta, None):
        tb = None if b is None else torch.from_numpy(b)
        ours = tk.NORMS[name](torch.from_numpy(x), torch.from_numpy(gamma), tb, 1e-5).numpy()
        np.testing.assert_allclose(ours, numpy_norm(x.copy(), gamma, b, 1e-5), atol=1e-12)


def test_kept_layers_share_numpys_memory_on_the_cpu(gpt2_folder):
    loaded = load_model(gpt2_folder)
    model_run(loaded, TEXT, backend="torch")
    w32 = loaded.cast["float32"]
    on = loaded.cast[("torch", "float32", "cpu")]
    assert on.library == "torch" and w32.library == "numpy"
    numpy_layer, torch_layer = w32.layers[1], on.layers[1]
    assert torch_layer is on.layers[1]  # kept: made once
    assert torch_layer.W_QKV.data_ptr() == numpy_layer.W_QKV.ctypes.data  # no copy
    assert torch_layer.W_Q.data_ptr() == torch_layer.W_QKV.data_ptr()  # a view of the fused
    np.testing.assert_array_equal(torch_layer.W_V.numpy(), numpy_layer.W_V)
    assert on.head.decoder is on.word  # GPT-2's tied head stays one table


def test_layers_not_kept_are_made_when_asked(gpt2_folder):
    class NotKept(list):
        keep = False

    numpy_layers = load_model(gpt2_folder).weights.layers
    layers = tw.TorchLayers(NotKept(numpy_layers), "cpu")
    first, again = layers[0], layers[0]
    assert first is not again and len(layers) == len(numpy_layers)
    np.testing.assert_array_equal(first.W_O.numpy(), numpy_layers[0].W_O)
    assert [lw.W_in.shape for lw in layers[-2:]] == [lw.W_in.shape for lw in numpy_layers[-2:]]
    with pytest.raises(IndexError):
        layers[len(numpy_layers)]


def test_float32_on_torch_agrees_with_numpy(gpt2_folder, minilm_folder):
    for folder in (gpt2_folder, minilm_folder):
        on_numpy = model_run(folder, TEXT)
        on_torch = model_run(folder, TEXT, backend="torch")
        assert on_torch.attentions.dtype == np.float32 and on_torch.hidden.dtype == np.float32
        np.testing.assert_allclose(on_torch.attentions, on_numpy.attentions, atol=1e-5)
        scale = np.abs(on_numpy.hidden).max()
        np.testing.assert_allclose(on_torch.hidden, on_numpy.hidden, atol=1e-5 * scale)


def test_an_edit_recomputes_from_its_layer_on_torch(gpt2_folder):
    base = model_run(gpt2_folder, TEXT, dtype="float64", backend="torch")
    session = from_model(gpt2_folder, TEXT, layer=2)
    W_Q = np.array(session.inputs.W_Q)  # [d, h*d_k]
    W_Q[3, 5] += 2.0
    edits = {2: session.with_changes(inputs=replace(session.inputs, W_Q=W_Q))}
    reused = model_run(gpt2_folder, TEXT, edits=edits, dtype="float64", backend="torch", reuse=base)
    fresh = model_run(gpt2_folder, TEXT, edits=edits, dtype="float64", backend="torch")
    assert reused.recomputed_from == 2 and fresh.recomputed_from == 0
    np.testing.assert_allclose(reused.logits, fresh.logits, rtol=0, atol=1e-12)
    assert np.abs(reused.logits - base.logits).max() > 1e-4
    on_numpy = model_run(gpt2_folder, TEXT, edits=edits, dtype="float64")
    np.testing.assert_allclose(reused.attentions, on_numpy.attentions, rtol=0, atol=1e-12)


def test_a_knocked_out_head_on_torch_is_the_same_as_on_numpy(bert_folder):
    text = "the cat sat on the [MASK]"
    on_torch = model_run(bert_folder, text, knockout=[(1, 0)], dtype="float64", backend="torch")
    on_numpy = model_run(bert_folder, text, knockout=[(1, 0)], dtype="float64")
    base = model_run(bert_folder, text, dtype="float64", backend="torch")
    np.testing.assert_allclose(on_torch.logits, on_numpy.logits, rtol=0, atol=1e-10)
    assert np.abs(on_torch.logits - base.logits).max() > 1e-4


def test_the_sweep_runs_on_torch(gpt2_folder):
    from attention_explorer.pretrained import knockout_sweep

    on_torch = knockout_sweep(gpt2_folder, TEXT, dtype="float64", backend="torch")
    on_numpy = knockout_sweep(gpt2_folder, TEXT, dtype="float64")
    np.testing.assert_allclose(on_torch, on_numpy, rtol=0, atol=1e-9)


def test_a_device_torch_cannot_use_is_named(gpt2_folder):
    with pytest.raises(ModelError, match="no-such-device"):
        model_run(gpt2_folder, TEXT, backend="torch:no-such-device")


def test_torch_missing_is_said_before_anything_runs(gpt2_folder, monkeypatch):
    from attention_explorer.engine import backend as engine_backend

    monkeypatch.setattr(engine_backend, "torch_installed", lambda: False)
    with pytest.raises(ModelError, match="torch is not installed"):
        model_run(gpt2_folder, TEXT, backend="torch")
    with pytest.raises(ModelError, match="not one of numpy, torch"):
        model_run(gpt2_folder, TEXT, backend="jax")


def test_a_read_only_weight_is_shared_not_copied(recwarn):
    weight = np.arange(12.0).reshape(3, 4)
    weight.flags.writeable = False  # as a weight left in the memory-mapped checkpoint is
    shared = tw.tensor(weight, "cpu")
    assert shared.data_ptr() == weight.ctypes.data
    transposed = tw.tensor(weight.T, "cpu")  # nn.Linear's [out, in] read as [in, out]
    assert transposed.data_ptr() == weight.ctypes.data
    np.testing.assert_array_equal(transposed.numpy(), weight.T)
    flipped = tw.tensor(weight[::-1], "cpu")  # negative strides: copied
    np.testing.assert_array_equal(flipped.numpy(), weight[::-1])
    assert tw.tensor(None, "cpu") is None
    assert not [w for w in recwarn if "not writable" in str(w.message)]
