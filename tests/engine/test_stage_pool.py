"""Large stages reuse the memory of dead traces, never of live ones."""

import numpy as np

from attention_explorer.engine import stage_pool


def _base(array: np.ndarray) -> np.ndarray:
    return array if array.base is None else array.base


def test_a_block_is_reused_only_when_no_view_of_it_is_left():
    stage_pool.clear_pool()
    shape = (1, 1024, 1024)  # 4 MiB float32: pooled
    first = stage_pool.pooled_empty(shape, np.float32)
    first[:] = 1.0
    row = first[0, 3]  # a view kept somewhere (a view's row, a zoomed region)
    del first
    second = stage_pool.pooled_empty(shape, np.float32)
    assert _base(second) is not _base(row)  # still in use through ``row``: a new block
    assert np.all(row == 1.0)
    second[:] = 2.0
    assert np.all(row == 1.0)  # the live array's numbers never change
    block = id(_base(row))  # its id only: a reference would keep it in use
    del row
    third = stage_pool.pooled_empty(shape, np.float32)
    assert id(_base(third)) == block  # nothing refers to it any more: reused
    stage_pool.clear_pool()


def test_small_arrays_and_a_full_pool_come_from_numpy(monkeypatch):
    stage_pool.clear_pool()
    small = stage_pool.pooled_empty((8, 8), np.float32)
    assert stage_pool.pool_bytes() == 0 and small.shape == (8, 8)
    monkeypatch.setattr(stage_pool, "POOL_LIMIT_BYTES", 5 * 1024 * 1024)
    held = stage_pool.pooled_empty((1024, 1024), np.float32)  # 4 MiB: pooled
    other = stage_pool.pooled_empty((1024, 1024), np.float32)  # the first is in use
    assert stage_pool.pool_bytes() == 4 * 1024 * 1024  # over the limit: not pooled
    assert _base(other) is not _base(held)
    stage_pool.clear_pool()
    assert stage_pool.pool_bytes() == 4 * 1024 * 1024  # ``held`` keeps its block
    del held
    stage_pool.clear_pool()
    assert stage_pool.pool_bytes() == 0


def test_a_new_size_gives_back_the_unused_blocks_of_other_sizes():
    stage_pool.clear_pool()
    kept = stage_pool.pooled_empty((1024, 1024), np.float32)  # 4 MiB, in use
    dropped = stage_pool.pooled_empty((1024, 2048), np.float32)  # 8 MiB
    del dropped
    assert stage_pool.pool_bytes() == 12 * 1024 * 1024
    bigger = stage_pool.pooled_empty((2048, 2048), np.float32)  # 16 MiB: n changed
    assert stage_pool.pool_bytes() == (4 + 16) * 1024 * 1024  # the unused 8 MiB went back
    del kept, bigger
    stage_pool.clear_pool()


def test_a_previewed_pass_gives_unused_blocks_back():
    from attention_explorer.run import compute_session
    from attention_explorer.session.resize import set_token_count
    from attention_explorer.session.starter import starter_session

    stage_pool.clear_pool()
    data = set_token_count(starter_session(), 40)
    free = stage_pool.pooled_empty((1024, 1024), np.float32)  # 4 MiB: pooled
    held = stage_pool.pooled_empty((1024, 1024), np.float32)
    del free  # unused now, still held by the pool
    assert stage_pool.pool_bytes() == 8 * 1024 * 1024
    compute_session(data)  # a full pass keeps the pool
    assert stage_pool.pool_bytes() == 8 * 1024 * 1024
    compute_session(data, preview=16)  # a previewed pass needs none: unused blocks go
    assert stage_pool.pool_bytes() == 4 * 1024 * 1024  # ``held`` is still in use
    del held
    stage_pool.clear_pool()
