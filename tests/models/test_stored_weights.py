"""Weights left in the checkpoint until a run needs them (pretrained/checkpoint/stored.py): layers
read straight into the run's dtype, one word table for a tied head, the output head read in
blocks, and a model too big for this machine refused before anything is read."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from attention_explorer.diagnostics import llama_scale_bench as bench
from attention_explorer.pretrained import (
    ModelError,
    from_model,
    load_model,
    model_attention,
    model_run,
    open_model as api,
)
from attention_explorer.pretrained.checkpoint import stored
from attention_explorer.pretrained.checkpoint.tensor_file import TensorFile, _widen
from attention_explorer.pretrained.checkpoint.weights import in_dtype

TINY = {
    **bench.SIZES["qwen2.5-0.5b"],
    "hidden_size": 32,
    "intermediate_size": 48,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 300,
}
TEXT = "the cat sat"


@pytest.fixture
def tiny(tmp_path):
    """A random bf16, sharded Qwen2-layout checkpoint (tied embeddings), fresh per test."""
    bench.write_checkpoint(tmp_path, TINY)
    return tmp_path


def test_bf16_widens_exactly_to_float32_and_float64():
    bits = np.arange(1 << 16, dtype=np.uint32)  # every bfloat16 value: zeros, subnormals, inf, NaN
    raw = np.concatenate([bits, bits[:5000]]).astype("<u2").reshape(2, -1)  # > one chunk
    expect = (raw.astype(np.uint32) << 16).view(np.float32)  # [2, 35268]
    got32 = _widen(raw, "BF16", np.float32)
    got64 = _widen(raw, "BF16", np.float64)
    assert got32.dtype == np.float32 and got64.dtype == np.float64
    np.testing.assert_array_equal(got32.view(np.uint32), expect.view(np.uint32))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got64, expect.astype(np.float64))  # NaNs equal here


def test_a_float32_run_reads_the_layers_as_float32(tiny, monkeypatch):
    asked = []
    real_get = TensorFile.get

    def get(self, name, dtype=np.float64):
        asked.append((name, np.dtype(dtype).name if dtype is not None else None))
        return real_get(self, name, dtype)

    monkeypatch.setattr(TensorFile, "get", get)
    loaded = load_model(tiny)
    run = model_run(loaded, TEXT)
    layer_reads = [dtype for name, dtype in asked if ".layers." in name]
    assert layer_reads and set(layer_reads) == {"float32"}  # never widened to float64
    assert run.attentions.dtype == np.float32 and np.isfinite(run.logits).all()


def test_layers_keep_the_stored_layout_and_the_tied_table_is_one(tiny):
    loaded = load_model(tiny)
    w32 = in_dtype(loaded.weights, "float32")
    lw = w32.layers[1]
    assert lw.W_Q.dtype == np.float32 and lw.W_Q.shape == (32, 32)
    # kept layers are laid out for speed: Q, K, V one row-major [d, 32 + 2 * 16] product
    assert lw.W_QKV.flags.c_contiguous and lw.W_QKV.shape == (32, 64) == (32, 32 + 2 * 16)
    assert np.shares_memory(lw.W_Q, lw.W_QKV)
    np.testing.assert_array_equal(lw.W_QKV[:, 32:48], lw.W_K)
    assert lw.W_in.flags.c_contiguous
    assert w32.head.decoder is w32.word is loaded.weights.word  # one table, not converted
    assert w32.layers[1] is lw  # converted once while it is kept


def test_blocks_of_the_head_give_the_logits_of_the_whole_table(tiny, monkeypatch):
    loaded = load_model(tiny)
    whole = model_run(loaded, TEXT, dtype="float64").logits  # [n, 300]
    monkeypatch.setattr(stored, "BLOCK_ROWS", 7)  # 300 rows in 43 blocks, the last short
    loaded.cast.clear()
    blocked = model_run(loaded, TEXT, dtype="float64").logits
    np.testing.assert_array_equal(blocked, whole)
    table = loaded.weights.word
    np.testing.assert_array_equal(
        table.rows([5, 0, 5], np.float64), table.full(np.float64)[[5, 0, 5]]
    )


def test_layers_converted_one_at_a_time_give_the_same_run(tiny, monkeypatch):
    kept = model_run(load_model(tiny), TEXT, dtype="float64")
    monkeypatch.setattr(stored, "KEEP_CONVERTED_BYTES", 0)
    shard = next(tiny.glob("model-*.safetensors"))
    os.utime(shard, (shard.stat().st_atime, shard.stat().st_mtime + 10))  # read it again
    loaded = load_model(tiny)
    assert loaded is not kept.model and not loaded.weights.layers.keep
    again = model_run(loaded, TEXT, dtype="float64")
    # the same numbers; kept layers run Q, K, V as one product, so to rounding only
    np.testing.assert_allclose(again.attentions, kept.attentions, rtol=0, atol=1e-14)
    np.testing.assert_allclose(again.logits, kept.logits, rtol=1e-13, atol=1e-13)
    assert len(loaded.weights.layers._cache) == stored.RECENT_LAYERS  # 3 layers, 2 kept
    lw = loaded.weights.layers[2]  # converted for one run: as read, nn.Linear's [out, in]
    assert lw.W_QKV is None and lw.W_Q.T.flags.c_contiguous  # a view: no transposed copy
    fast = model_run(loaded, TEXT)  # float32 matches float64 to float32's precision
    np.testing.assert_allclose(fast.attentions, kept.attentions, atol=1e-5)
    if importlib.util.find_spec("torch") is not None:  # torch reads the same layers as made
        on_torch = model_run(loaded, TEXT, dtype="float64", backend="torch")
        np.testing.assert_allclose(on_torch.logits, again.logits, rtol=1e-12, atol=1e-12)
        torch32 = model_run(loaded, TEXT, backend="torch")
        np.testing.assert_allclose(torch32.logits, fast.logits, atol=1e-4)


def test_the_memory_a_model_needs_is_counted_from_its_headers(tiny):
    loaded = load_model(tiny)
    t = loaded.weights.stored.tensors
    size = sum(t.nbytes(k) for k in t.names())
    layers = loaded.weights.stored.converted(np.float64)  # [3] bytes each in float64
    assert len(layers) == 3 and layers[0] == 8 * loaded.weights.stored.elements[0]
    assert stored.memory_need(size, layers, keep=True) == size + sum(layers) + stored.WORKING_BYTES
    assert stored.memory_need(size, layers, keep=False) == (
        size + 2 * layers[0] + stored.WORKING_BYTES
    )
    assert stored.available_memory() is None or stored.available_memory() > 0


@pytest.mark.parametrize("call", ["load_model", "model_run", "from_model"])
def test_a_model_too_big_for_memory_is_refused_before_loading(tiny, monkeypatch, call):
    monkeypatch.setattr(stored, "available_memory", lambda: 100 * 2**20)
    read = []
    monkeypatch.setattr(TensorFile, "get", lambda *a, **k: read.append(a) or 1 / 0)
    functions = {
        "load_model": lambda: load_model(tiny),
        "model_run": lambda: model_run(tiny, TEXT),
        "from_model": lambda: from_model(tiny, TEXT, layer=1),
    }
    with pytest.raises(ModelError, match=r"needs about 0\.\d GiB .* has 0\.1 GiB available"):
        functions[call]()
    assert not read  # no tensor was read
    with pytest.raises(ModelError) as err:
        load_model(tiny)
    assert err.value.what == "memory" and len(str(err.value).splitlines()) == 1


def test_the_overview_skips_the_output_head(tiny, monkeypatch):
    loaded = load_model(tiny)
    every, tokens = model_attention(loaded, TEXT)  # float64
    monkeypatch.setattr(stored.StoredTable, "blocks", lambda *a, **k: 1 / 0)  # no head read
    again, _ = model_attention(loaded, TEXT)
    fast, _ = model_attention(loaded, TEXT, dtype="float32")
    assert every.dtype == np.float64 and fast.dtype == np.float32
    np.testing.assert_array_equal(again, every)
    np.testing.assert_allclose(fast, every, atol=1e-5)
    assert model_run(loaded, TEXT, logits=False).logits is None
    assert every.shape == (3, 4, len(tokens), len(tokens))


def test_opening_a_layer_of_the_overview_runs_no_layer_again(tiny, monkeypatch):
    loaded = load_model(tiny)
    alone = from_model(loaded, TEXT, layer=2)  # runs layers 0 and 1
    model_attention(loaded, TEXT)
    monkeypatch.setattr(api, "run_layers", lambda *a, **k: 1 / 0)
    again = from_model(loaded, TEXT, layer=2)  # the overview's hidden states
    np.testing.assert_array_equal(again.inputs.X, alone.inputs.X)  # to the bit
    with pytest.raises(ZeroDivisionError):
        from_model(loaded, "another text", layer=2)
