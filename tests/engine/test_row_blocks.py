"""Long sequences go through their query rows a block at a time: the same numbers as one pass."""

import dataclasses
import importlib

import numpy as np
import pytest

from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.resize import set_heads, set_token_count
from attention_explorer.session.starter import starter_session

# the module that decides the row blocks
compute_module = importlib.import_module("attention_explorer.engine.row_blocks")
# ... and the one that runs a small full trace as one block
block_runner = importlib.import_module("attention_explorer.engine.block_runner")


def _data(n: int, heads: int, normalizer: str = "softmax", mask: str = "causal"):
    data = set_token_count(set_heads(starter_session(), heads), n)
    config = dataclasses.replace(data.config, normalizer=normalizer, mask=mask)
    return dataclasses.replace(data, config=config)


def _pass(monkeypatch, data, elements: int, **options):
    monkeypatch.setattr(compute_module, "ROW_BLOCK_ELEMENTS", elements)
    monkeypatch.setattr(block_runner, "ONE_BLOCK_ELEMENTS", elements)
    return compute_session(data, **options)


@pytest.mark.parametrize("normalizer", ["softmax", "sparsemax", "sigmoid"])
@pytest.mark.parametrize(
    ("heads", "selected", "stages"),
    [
        (2, None, None),  # every head, every stage (concat and output from blocked rows)
        (4, [1], ("weights", "scores", "masked")),  # one head, only some square stages
        (4, [0, 3], ("weights",)),  # scaled not kept: masking in place, block by block
    ],
)
def test_row_blocks_give_the_one_pass_numbers(monkeypatch, heads, selected, stages, normalizer):
    data = _data(37, heads, normalizer)  # 37 rows: a ragged last block
    whole = _pass(monkeypatch, data, 10**12, heads=selected, stages=stages)
    blocked = _pass(monkeypatch, data, 3 * 37, heads=selected, stages=stages)  # 3 rows a block
    assert blocked.heads == whole.heads
    for name, array in whole.stages.items():
        other = blocked.stages[name]
        if array is None:
            assert other is None, name
            continue
        assert other.shape == array.shape and other.dtype == array.dtype, name
        scale = float(np.max(np.abs(array[np.isfinite(array)]), initial=1.0))
        # float32 sums in another order (BLAS blocks differently): a few ulps of the largest
        np.testing.assert_allclose(other, array, rtol=1e-5, atol=1e-6 * scale, err_msg=name)
        np.testing.assert_array_equal(np.isneginf(other), np.isneginf(array), err_msg=name)


def test_row_block_sizes():
    assert compute_module.row_block(1, 64, 64) == 64  # small: one block, no copies
    rows = compute_module.row_block(1, 4096, 4096)
    assert 1 <= rows < 4096 and rows * 4096 <= compute_module.ROW_BLOCK_ELEMENTS
    assert compute_module.row_block(8, 10**6, 10**6) == 1  # never fewer than one row


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_row_blocks_of_the_whole_pipeline(monkeypatch, mask):
    """Weights, head outputs and the output projection agree block by block, masked or not."""
    data = _data(20, 2, mask=mask)
    whole = _pass(monkeypatch, data, 10**12)
    blocked = _pass(monkeypatch, data, 2 * 20)
    np.testing.assert_allclose(blocked["weights"], whole["weights"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(blocked["output"], whole["output"], rtol=1e-5, atol=1e-5)
    assert blocked.fully_masked_rows == whole.fully_masked_rows


def test_row_blocks_on_torch_match_numpy(monkeypatch):
    """The torch path (the one CUDA takes; run here on the cpu) blocks rows the same way."""
    pytest.importorskip("torch")
    data = _data(29, 2)
    numpy_trace = _pass(monkeypatch, data, 10**12)
    torch_trace = _pass(monkeypatch, data, 2 * 29, backend="torch")
    for name in ("scores", "masked", "weights", "head_outputs", "output"):
        np.testing.assert_allclose(
            torch_trace[name], numpy_trace[name], rtol=1e-5, atol=1e-5, err_msg=name
        )


def test_row_blocks_across_uneven_chunks_of_heads(monkeypatch):
    """Eight heads in chunks of three (the last chunk has two, so more rows per block): the
    reused scratch arrays grow to fit, and the numbers stay those of one pass."""
    data = _data(23, 8)
    whole = _pass(monkeypatch, data, 10**12, heads=[1, 7])
    engine = importlib.import_module("attention_explorer.engine.compute")
    monkeypatch.setattr(engine, "CHUNK_ELEMENTS", 3 * 23 * 23)  # three heads per chunk
    blocked = _pass(monkeypatch, data, 3 * 2 * 23, heads=[1, 7])  # 2 rows, 3 for the last
    for name in ("weights", "masked", "scores", "head_outputs", "output"):
        np.testing.assert_allclose(blocked[name], whole[name], rtol=1e-5, atol=1e-5, err_msg=name)
