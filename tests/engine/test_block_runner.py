"""Row blocks of a full trace run on every core; a previewed pass stays on one thread."""

from __future__ import annotations

import importlib
import threading
import warnings

import numpy as np
import pytest

from attention_explorer.engine.backend import ArrayLib, Backend
from attention_explorer.engine.block_runner import ONE_BLOCK_ELEMENTS, full_trace_rows
from attention_explorer.engine.row_blocks import (
    FULL_BLOCK_ELEMENTS,
    ROW_BLOCK_ELEMENTS,
    full_block_elements,
)
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.resize import set_heads, set_token_count
from attention_explorer.session.starter import starter_session

compute_module = importlib.import_module("attention_explorer.engine.compute")
row_blocks = importlib.import_module("attention_explorer.engine.row_blocks")
block_runner = importlib.import_module("attention_explorer.engine.block_runner")


def _record_threads(monkeypatch) -> set[str]:
    """The names of the threads that will compute row blocks, on a 3-core machine."""
    seen: set[str] = set()
    real = compute_module.attend_rows

    def recording(*args, **kwargs):
        seen.add(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(compute_module, "attend_rows", recording)
    monkeypatch.setattr(compute_module, "usable_cores", lambda: 3)
    return seen


@pytest.fixture
def threads_seen(monkeypatch):
    """The names of the threads that computed row blocks; 8 rows a block, 3 cores."""
    seen = _record_threads(monkeypatch)
    monkeypatch.setattr(row_blocks, "ROW_BLOCK_ELEMENTS", 2 * 8 * 40)  # 2 heads x 8 rows
    monkeypatch.setattr(row_blocks, "FULL_BLOCK_ELEMENTS", 2 * 8 * 40)
    monkeypatch.setattr(block_runner, "ONE_BLOCK_ELEMENTS", 0)  # no pass is small
    monkeypatch.setattr(block_runner, "whole_chunks", lambda lib: False)  # torch too in blocks
    return seen


def _data(n=40, heads=2):
    return set_token_count(set_heads(starter_session(), heads), n)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_full_trace_spreads_its_blocks_over_threads_with_the_same_numbers(
    threads_seen, monkeypatch, backend
):
    if backend == "torch":
        pytest.importorskip("torch")
    data = _data()
    spread = compute_session(data, backend)
    assert len(threads_seen) == 3 and threading.current_thread().name in threads_seen
    monkeypatch.setattr(compute_module, "usable_cores", lambda: 1)
    threads_seen.clear()
    one = compute_session(data, backend)
    assert threads_seen == {threading.current_thread().name}
    for name, value in one.stages.items():
        if value is not None:
            np.testing.assert_array_equal(spread[name], value, err_msg=name)


def test_a_previewed_pass_stays_on_the_calling_thread(threads_seen):
    trace = compute_session(_data(), heads=[1], stages=("weights", "masked"), preview=16)
    assert trace.preview("weights") is not None  # it did preview
    assert threads_seen == {threading.current_thread().name}


def test_an_overflow_on_a_block_thread_redoes_the_pass_in_float64(threads_seen):
    data = _data()
    big = data.inputs.X * 1e19  # float32 scores overflow, float64 ones do not
    import dataclasses

    data = dataclasses.replace(data, inputs=dataclasses.replace(data.inputs, X=big))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's error state reaches the block threads too
        trace = compute_session(data)
    assert len(threads_seen) == 3
    assert trace.dtype == "float64" and "overflowed" in trace.notes[0]
    assert np.isfinite(trace["weights"]).all()


def test_full_trace_blocks_give_every_thread_one_within_bounds():
    assert full_block_elements(8 * 256 * 256, 2) == 8 * 256 * 256 // 2
    assert full_block_elements(8 * 4096 * 4096, 2) == FULL_BLOCK_ELEMENTS
    assert full_block_elements(1000, 16) == ROW_BLOCK_ELEMENTS
    assert full_block_elements(8 * 256 * 256, 1) == 8 * 256 * 256


def test_a_small_full_trace_is_one_block_on_the_calling_thread(monkeypatch):
    seen = _record_threads(monkeypatch)
    compute_session(_data(n=512, heads=2))  # 2 x 512 x 512 cells: several blocks before
    assert seen == {threading.current_thread().name}


def test_full_trace_rows_are_one_block_up_to_the_limit_then_one_block_a_thread_at_least():
    lib = ArrayLib(Backend("numpy"))
    assert full_trace_rows(lib, 8, 256, 256, 2) == 256
    assert full_trace_rows(lib, 8, 1024, 1024, 2) == 1024  # 8M cells: the limit itself
    assert 8 * 1024 * 1024 == ONE_BLOCK_ELEMENTS
    assert full_trace_rows(lib, 8, 2048, 2048, 2) == FULL_BLOCK_ELEMENTS // (8 * 2048)
    assert full_trace_rows(lib, 8, 4096, 4096, 2) == FULL_BLOCK_ELEMENTS // (8 * 4096)


def test_torch_on_the_cpu_runs_a_full_trace_chunk_whole_on_the_calling_thread(monkeypatch):
    pytest.importorskip("torch")
    seen: list[tuple[str, int]] = []  # (thread, query rows) of each block
    real = compute_module.attend_rows

    def recording(lib, config, q, *args, **kwargs):
        seen.append((threading.current_thread().name, int(q.shape[1])))
        return real(lib, config, q, *args, **kwargs)

    monkeypatch.setattr(compute_module, "attend_rows", recording)
    monkeypatch.setattr(compute_module, "usable_cores", lambda: 3)
    monkeypatch.setattr(block_runner, "ONE_BLOCK_ELEMENTS", 0)  # however large the chunk
    monkeypatch.setattr(row_blocks, "ROW_BLOCK_ELEMENTS", 2 * 8 * 40)
    monkeypatch.setattr(row_blocks, "FULL_BLOCK_ELEMENTS", 2 * 8 * 40)
    data = _data()
    whole = compute_session(data, "torch")
    assert seen == [(threading.current_thread().name, 40)]
    monkeypatch.setattr(block_runner, "whole_chunks", lambda lib: False)
    blocked = compute_session(data, "torch")  # in blocks on three threads
    assert len({thread for thread, _ in seen}) == 3 and all(rows < 40 for _, rows in seen[1:])
    for name, value in whole.stages.items():
        if value is not None:
            scale = float(np.max(np.abs(value[np.isfinite(value)]), initial=1.0))
            np.testing.assert_allclose(
                blocked[name], value, rtol=1e-5, atol=1e-6 * scale, err_msg=name
            )


def test_torch_on_the_cpu_keeps_a_chunk_of_heads_not_kept_within_the_chunk_bound(monkeypatch):
    pytest.importorskip("torch")
    rows_seen: list[int] = []
    real = compute_module.attend_rows

    def recording(lib, config, q, *args, **kwargs):
        rows_seen.append(int(q.shape[1]))
        return real(lib, config, q, *args, **kwargs)

    monkeypatch.setattr(compute_module, "attend_rows", recording)
    monkeypatch.setattr(block_runner, "ONE_BLOCK_ELEMENTS", 0)
    monkeypatch.setattr(block_runner, "CHUNK_ELEMENTS", 2 * 40 * 40 - 1)  # just under a chunk
    monkeypatch.setattr(row_blocks, "ROW_BLOCK_ELEMENTS", 2 * 8 * 40)
    monkeypatch.setattr(row_blocks, "FULL_BLOCK_ELEMENTS", 2 * 8 * 40)
    data = _data()
    compute_session(data, "torch", heads=[0])  # head 1 only for concat and output: blocks
    assert len(rows_seen) > 1 and max(rows_seen) < 40
    rows_seen.clear()
    compute_session(data, "torch")  # every head kept: whole
    assert rows_seen == [40]
