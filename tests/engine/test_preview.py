"""Previews: a long sequence's square stages at display resolution, made while computing.

A pass asked for previews keeps each square stage as a picture (the same as shrinking the
full stage), the stage's range and the weights' per-row range, and recomputes the rows that
are read. These tests compare every piece against the same pass computed in full.
"""

import dataclasses
import importlib

import numpy as np
import pytest

from attention_explorer.core.stages import stage
from attention_explorer.display import build_frame, levels_for, shrink, stage_picture
from attention_explorer.display.levels import levels_from_range
from attention_explorer.display.shrink import fits_float32
from attention_explorer.engine.recompute import RecomputedStage
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.resize import set_heads, set_token_count
from attention_explorer.session.starter import starter_session

row_blocks = importlib.import_module("attention_explorer.engine.row_blocks")
SQUARE = ("scores", "scaled", "masked", "weights")


def _data(n: int, heads: int, normalizer="softmax", mask="causal", temperature=1.0):
    data = set_token_count(set_heads(starter_session(), heads), n)
    config = dataclasses.replace(
        data.config, normalizer=normalizer, mask=mask, temperature=temperature
    )
    return dataclasses.replace(data, config=config)


def _pair(data, limit, **options):
    """The same pass in full and with previews at ``limit``."""
    return compute_session(data, **options), compute_session(data, preview=limit, **options)


def _close(actual, expected, name):
    scale = float(np.max(np.abs(expected[np.isfinite(expected)]), initial=1.0))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6 * scale, err_msg=name)


@pytest.mark.parametrize("normalizer", ["softmax", "sparsemax", "sigmoid"])
@pytest.mark.parametrize("mask", ["causal", "none"])
@pytest.mark.parametrize(("n", "limit"), [(64, 16), (50, 16), (37, 10)])  # 50, 37: ragged blocks
def test_a_preview_is_the_shrink_of_the_full_stage(monkeypatch, normalizer, mask, n, limit):
    monkeypatch.setattr(row_blocks, "ROW_BLOCK_ELEMENTS", 7 * n)  # many row blocks
    full, previewed = _pair(_data(n, 4, normalizer, mask, temperature=0.7), limit, heads=[0, 2, 3])
    for name in (*SQUARE, "mask"):
        preview = previewed.preview(name)
        assert preview is not None and preview.limit == limit, name
        for index, head in enumerate(previewed.heads if name != "mask" else [None]):
            whole = full.stage(name, head)  # [n, n]
            expected = shrink(whole, stage(name).shrink, limit)
            assert preview.block == expected.block, name
            _close(preview.image[index], expected.image, name)
            np.testing.assert_array_equal(
                preview.masked_cells[index], expected.masked_cells, err_msg=name
            )
            got = levels_from_range(name, preview.low[index], preview.high[index])
            np.testing.assert_allclose(got, levels_for(name, whole), rtol=1e-6, err_msg=name)
    weights = previewed.preview("weights")
    allowed = full["mask"]  # [n, n]
    for index, head in enumerate(previewed.heads):
        w = full.stage("weights", head)  # [n, n]
        low = np.min(w, axis=1, where=allowed, initial=np.inf)  # [n]
        high = np.max(w, axis=1, where=allowed, initial=-np.inf)  # [n]
        _close(weights.row_low[index], low, "row_low")
        _close(weights.row_high[index], high, "row_high")


def test_previewed_rows_are_recomputed_when_read(monkeypatch):
    monkeypatch.setattr(row_blocks, "ROW_BLOCK_ELEMENTS", 5 * 40)
    full, previewed = _pair(_data(40, 2), 8, heads=[1])
    for name in SQUARE:
        lazy, whole = previewed.stage(name, 1), full.stage(name, 1)
        assert isinstance(lazy, RecomputedStage) and lazy.shape == whole.shape
        assert lazy.dtype == whole.dtype and len(lazy) == 40 and lazy.ndim == 2
        _close(lazy[7], whole[7], name)  # one row
        _close(lazy[-1], whole[-1], name)  # counted from the end, like numpy
        _close(lazy[3:19], whole[3:19], name)  # a contiguous block of rows
        _close(lazy[5:9, 2:30], whole[5:9, 2:30], name)  # a zoomed region
        assert float(lazy[6, 2]) == pytest.approx(float(whole[6, 2]), rel=1e-5, abs=1e-6)
        _close(np.asarray(lazy), whole, name)  # the whole stage
        _close(lazy[::2], whole[::2], name)  # anything else: through the whole stage
        with pytest.raises(IndexError):
            lazy[40]
    weights = previewed.stage("weights", 1)
    _close(weights - full.stage("weights", 1), np.zeros((40, 40)), "weights")  # arithmetic
    assert (weights >= 0).all() and np.max(weights) == pytest.approx(full["weights"].max())
    three_d = previewed["weights"]  # [s, n, m] of the kept heads
    assert three_d.shape == (1, 40, 40)
    _close(three_d[0][4], full.stage("weights", 1)[4], "weights")


def test_a_previewed_pass_keeps_no_square_array():
    data = _data(300, 2)
    full, previewed = _pair(data, 64)

    def held(trace):
        return sum(a.nbytes for a in trace.stages.values() if isinstance(a, np.ndarray))

    square_bytes = sum(full[name].nbytes for name in SQUARE)
    assert held(full) - held(previewed) >= square_bytes  # the four [s, n, n] stages are gone
    assert all(isinstance(previewed[name], RecomputedStage) for name in SQUARE)


def test_short_sequences_are_not_previewed():
    trace = compute_session(_data(16, 2), preview=16)  # fits: nothing to shrink
    assert not trace.previews and isinstance(trace["weights"], np.ndarray)


def test_a_float64_pass_previews_in_float64():
    data = _data(48, 2)
    X = data.inputs.X.copy()
    X[1, 2] = 1e30  # float32 overflows: the pass is redone in float64
    data = dataclasses.replace(data, inputs=dataclasses.replace(data.inputs, X=X))
    full, previewed = _pair(data, 16)
    assert previewed.notes and previewed.dtype == "float64"
    for name in SQUARE:
        expected = shrink(full.stage(name, 0), stage(name).shrink, 16)
        shown = fits_float32(previewed.preview(name).image[0])  # as the frame narrows it
        assert shown.dtype == expected.image.dtype, name
        np.testing.assert_allclose(shown, expected.image, rtol=1e-9, err_msg=name)
        assert np.isfinite(previewed.preview(name).image).all()


@pytest.mark.parametrize("scale", ["linear", "row", "log"])
def test_frames_from_previews_match_frames_from_full_stages(scale):
    full, previewed = _pair(_data(80, 2), 16)
    for name in (*SQUARE, "mask"):
        head = 1 if stage(name).per_head else None
        a = build_frame(full, name, head, scale=scale, limit=16)
        b = build_frame(previewed, name, head, scale=scale, limit=16)
        assert a.heading == b.heading and a.block == b.block, name
        np.testing.assert_allclose(b.levels, a.levels, rtol=1e-6, err_msg=name)
        _close(b.image, a.image, name)
        np.testing.assert_array_equal(b.masked_cells, a.masked_cells, err_msg=name)
        zoomed_a = build_frame(full, name, head, region=(10, 30, 5, 25), limit=16)
        zoomed_b = build_frame(previewed, name, head, region=(10, 30, 5, 25), limit=16)
        _close(zoomed_b.image, zoomed_a.image, name)  # exact cells, recomputed rows
        assert zoomed_a.heading == zoomed_b.heading
        np.testing.assert_allclose(zoomed_b.levels, zoomed_a.levels, rtol=1e-6)


def test_thumbnails_from_previews_are_block_maxima():
    full, previewed = _pair(_data(96, 2), 32)
    for limit in (32, 8):  # the preview itself, and shrunk again
        a = stage_picture(full, "weights", 0, limit)
        b = stage_picture(previewed, "weights", 0, limit)
        assert a.block == b.block
        _close(b.image, a.image, "weights")


def test_torch_passes_make_the_same_previews_and_rows():
    pytest.importorskip("torch")
    data = _data(70, 2)
    numpy_full = compute_session(data)
    torch_previewed = compute_session(data, backend="torch", preview=16)
    for name in SQUARE:
        expected = shrink(numpy_full.stage(name, 0), stage(name).shrink, 16)
        _close(torch_previewed.preview(name).image[0], expected.image, name)
        _close(torch_previewed.stage(name, 0)[33], numpy_full.stage(name, 0)[33], name)


def test_a_row_read_from_several_stages_is_computed_once(monkeypatch):
    import importlib

    recompute = importlib.import_module("attention_explorer.engine.recompute")
    full, previewed = _pair(_data(40, 2), 8)
    calls = []
    real = recompute.attend_rows
    monkeypatch.setattr(recompute, "attend_rows", lambda *a: calls.append(1) or real(*a))
    rows = {name: previewed.stage(name, 1)[11] for name in SQUARE}  # one row of each stage
    assert len(calls) == 1  # every square stage of row 11 came from one computation
    for name, row in rows.items():
        _close(row, full.stage(name, 1)[11], name)
        assert not row.flags.writeable  # shared with the next reader: read-only
    previewed.stage("weights", 1)[12]
    assert len(calls) == 2  # another row: computed


def test_mask_previews_are_reused_and_an_older_mask_is_let_go():
    import weakref

    from attention_explorer.engine.cache import EngineCache
    from attention_explorer.engine.preview import preview_of

    cache = EngineCache()
    mask = np.tri(40, 40, dtype=bool)
    mask.setflags(write=False)  # the engine's shared masks are read-only
    first = preview_of(mask, "max", 16, cache)
    assert preview_of(mask, "max", 16, cache) is first  # the same mask again: the same preview
    assert preview_of(mask, "mean", 16, cache) is not first
    assert preview_of(mask, "max", 16) is not first  # without a cache: made anew (pure)
    assert preview_of(mask, "max", 16, EngineCache()) is not first  # caches share nothing
    writable = np.tri(40, 40, dtype=bool)
    assert preview_of(writable, "max", 16, cache) is not preview_of(writable, "max", 16, cache)
    gone = weakref.ref(mask)
    other = np.ones((40, 40), dtype=bool)
    other.setflags(write=False)
    preview_of(other, "max", 16, cache)
    del mask, first
    assert gone() is None  # the older mask is not kept alive by the remembered previews


@pytest.mark.parametrize(
    "kept",
    [("scores",), ("weights",), ("masked",), ("scaled", "weights"), ("scores", "masked")],
)
def test_any_subset_of_the_square_stages_is_previewed(kept):
    full, previewed = _pair(_data(40, 2), 16, stages=kept)
    assert set(previewed.previews) == set(kept)
    for name in kept:
        expected = shrink(full.stage(name, 0), stage(name).shrink, 16)
        _close(previewed.preview(name).image[0], expected.image, name)
