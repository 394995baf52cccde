"""The stage pool reuses a block only once no array refers to it, and belongs to its owner."""

import numpy as np

from attention_explorer.engine.cache import EngineCache
from attention_explorer.engine.stage_pool import StagePool

MIB = 1024 * 1024


def test_a_block_is_reused_only_when_nothing_refers_to_it():
    pool = StagePool()
    shape = (4, 512, 1024)  # 8 MiB of float32: pooled
    first = pool.empty(shape, np.float32)
    first[...] = 1.0
    view = first[0]  # a view keeps the block in use
    del first
    second = pool.empty(shape, np.float32)
    assert not np.shares_memory(second, view)  # in use: a new block
    del view
    second[...] = 2.0
    base = second.base
    del second
    third = pool.empty(shape, np.float32)  # nothing refers to the first block now
    assert third.base is not None and pool.nbytes() == 16 * MIB
    del base, third
    pool.clear()
    assert pool.nbytes() == 0


def test_small_arrays_are_not_pooled_and_the_limit_holds():
    pool = StagePool(limit_bytes=5 * MIB)
    small = pool.empty((8, 8), np.float32)
    assert pool.nbytes() == 0 and small.shape == (8, 8)
    held = pool.empty((1024, 1024), np.float32)  # 4 MiB: pooled
    other = pool.empty((1024, 1024), np.float32)  # the first is in use, over the limit
    assert pool.nbytes() == 4 * MIB  # not pooled
    del other
    pool.clear()
    assert pool.nbytes() == 4 * MIB  # ``held`` keeps its block
    del held
    pool.clear()
    assert pool.nbytes() == 0


def test_a_new_size_gives_unused_blocks_of_other_sizes_back():
    pool = StagePool()
    kept = pool.empty((1024, 1024), np.float32)  # 4 MiB, in use
    dropped = pool.empty((1024, 2048), np.float32)  # 8 MiB
    del dropped
    assert pool.nbytes() == 12 * MIB
    bigger = pool.empty((2048, 2048), np.float32)  # 16 MiB: n changed
    assert pool.nbytes() == (4 + 16) * MIB  # the unused 8 MiB went back
    del kept, bigger


def test_two_pools_share_nothing():
    one, two = StagePool(), StagePool()
    a = one.empty((1024, 1024), np.float32)
    del a
    b = two.empty((1024, 1024), np.float32)  # one's unused block is not two's to take
    assert one.nbytes() == two.nbytes() == 4 * MIB
    del b


def test_a_previewed_pass_gives_its_cache_s_unused_blocks_back():
    from attention_explorer.session.compute_session import compute_session
    from attention_explorer.session.resize import set_token_count
    from attention_explorer.session.starter import starter_session

    cache = EngineCache()
    data = set_token_count(starter_session(), 40)
    free = cache.empty((1024, 1024), np.float32)  # 4 MiB: pooled
    held = cache.empty((1024, 1024), np.float32)
    del free  # unused now, still held by the pool
    assert cache.pool.nbytes() == 8 * MIB
    compute_session(data, cache=cache)  # a full pass keeps the pool
    assert cache.pool.nbytes() == 8 * MIB
    compute_session(data, preview=16, cache=cache)  # a previewed pass needs none
    assert cache.pool.nbytes() == 4 * MIB  # ``held`` is still in use
    del held
