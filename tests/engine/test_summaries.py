"""Long-context summaries: entropy, top keys, attention distance and sinks, on known rows."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.display import summaries as S

# Rows: one-hot on key 0, even over 4 keys, half/half on keys 1 and 3.
W = np.array([[1.0, 0, 0, 0], [0.25, 0.25, 0.25, 0.25], [0, 0.5, 0, 0.5]])  # [3, 4]


def test_entropy_in_bits():
    np.testing.assert_allclose(S.row_entropy(W), [0.0, 2.0, 1.0])


def test_top_keys_largest_first_ties_in_key_order():
    keys, values = S.top_keys(W, 2)
    np.testing.assert_array_equal(keys, [[0, 1], [0, 1], [1, 3]])
    np.testing.assert_allclose(values, [[1.0, 0.0], [0.25, 0.25], [0.5, 0.5]])
    assert S.top_keys(W, 10)[0].shape == (3, 4)


def test_offset_mass_and_distance_histogram():
    mass = S.offset_mass(W)  # offsets -2..3 at indices 0..5
    # row 0 at offset 0: 1; row 1: offsets -1..2 each .25; row 2: offsets -1 and +1 each .5
    expected = np.zeros(6)
    expected[2] += 1.0
    expected[[1, 2, 3, 4]] += 0.25
    expected[[1, 3]] += 0.5
    np.testing.assert_allclose(mass, expected / 3)
    edges, hist = S.distance_histogram(W, bins=8)
    assert edges[0] == 0 and edges[1] == 1  # distance 0 alone in the first bin
    assert hist.sum() == pytest.approx(1.0)
    assert hist[0] == pytest.approx(1.25 / 3)  # attention to the query's own position


def test_distance_histogram_of_a_previous_token_head_peaks_at_one():
    n = 600
    weights = np.eye(n, k=-1)  # [n, n]: every query looks one back
    weights[0, 0] = 1.0
    edges, hist = S.distance_histogram(weights)
    one = int(np.searchsorted(edges, 1, side="right")) - 1
    assert hist[one] == pytest.approx((n - 1) / n)


def test_sinks_find_a_key_every_query_attends_to():
    rng = np.random.default_rng(0)
    n = 1000
    logits = rng.normal(size=(n, n))  # [n, n]
    logits[:, 0] += 6.0  # key 0 (a BOS-like token) draws weight from every query
    weights = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    sinks = S.attention_sinks(weights, top=3)
    assert sinks.keys[0] == 0 and sinks.ratio[0] > 100
    assert len(sinks.keys) == 1  # nothing else clears four times its even share
    assert S.received_weight(weights).sum() == pytest.approx(1.0)
    even = S.attention_sinks(np.full((4, 4), 0.25))
    assert even.keys.size == 0


def test_masked_cells_and_row_blocks():
    n = 700  # more than one row block
    weights = np.tril(np.ones((n, n)))
    weights /= weights.sum(axis=1, keepdims=True)  # causal, even over the visible keys
    entropy = S.row_entropy(weights)
    np.testing.assert_allclose(entropy, np.log2(np.arange(1, n + 1)))
    masked = np.where(weights > 0, weights, -np.inf)  # −∞ never counts
    np.testing.assert_allclose(S.row_entropy(masked), entropy)
