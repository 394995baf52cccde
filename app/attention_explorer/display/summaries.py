"""Long-context summaries of one head's attention weights: readable at 4096 tokens.

Four views of a ``weights [n, m]`` matrix (rows are queries, each row sums to 1 over the keys
it may see): how spread out each query's attention is (entropy), which keys each query
attends to most (top k), how far back or ahead attention reaches (a histogram of the
distance key − query, weighted by attention) and which keys collect weight from every query
(attention sinks). Pure numpy, no state: the window's summary view and tests both call these.
Rows are read in blocks, so a stage whose rows are recomputed when read is never held whole.
Under learned sink logits (gpt-oss, the engine's ``attention_sinks``) a row sums to 1 − the
sink's weight: every summary here reads the keys' share as it is (the entropy of those
weights, their masses), never renormalised, so a head that gives its weight to its sink
shows little mass on any key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Query rows read at a time (a block of a 4096-key stage is 4 MiB in float32).
ROW_BLOCK = 256


def _row_blocks(weights):
    """(first row, ``block [rows, m]`` as float64) over ``weights [n, m]``, block by block."""
    n = weights.shape[0]
    for r0 in range(0, n, ROW_BLOCK):
        block = np.asarray(weights[r0 : min(n, r0 + ROW_BLOCK)], dtype=np.float64)  # [rows, m]
        yield r0, np.where(np.isfinite(block), block, 0.0)


def row_entropy(weights) -> np.ndarray:
    """Each query's attention entropy in bits, ``[n]``: 0 when one key takes all the weight,
    log2(k) when k keys share it equally (0·log 0 counts as 0; rows are used as given)."""
    out = np.zeros(weights.shape[0])  # [n]
    for r0, block in _row_blocks(weights):
        positive = block > 0  # [rows, m]
        logs = np.log2(block, out=np.zeros_like(block), where=positive)  # [rows, m]
        out[r0 : r0 + block.shape[0]] = -(block * logs).sum(axis=1)
    return np.maximum(out, 0.0)


def top_keys(weights, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` keys each query weighs most: (``keys [n, k]`` int, ``weight [n, k]``),
    largest first; ties keep the earlier key first. ``k`` is capped at the number of keys."""
    n, m = weights.shape
    k = max(1, min(int(k), m))
    keys = np.zeros((n, k), dtype=np.int64)  # [n, k]
    values = np.zeros((n, k))  # [n, k]
    for r0, block in _row_blocks(weights):
        order = np.argsort(-block, axis=1, kind="stable")[:, :k]  # [rows, k]
        keys[r0 : r0 + block.shape[0]] = order
        values[r0 : r0 + block.shape[0]] = np.take_along_axis(block, order, axis=1)
    return keys, values


def offset_mass(weights) -> np.ndarray:
    """The attention weight at each offset key − query, summed over queries and divided by
    the number of queries: ``[n + m − 1]``, index ``o + n − 1`` for offset ``o`` (offset 0 is
    a query's own position; negative offsets look back). Sums to 1 when every row does."""
    n, m = weights.shape
    mass = np.zeros(n + m - 1)  # [n + m - 1]
    for r0, block in _row_blocks(weights):
        for i, row in enumerate(block):  # row i of the stage: offsets -(r0+i) .. m-1-(r0+i)
            start = n - 1 - (r0 + i)
            mass[start : start + m] += row
    return mass / max(n, 1)


def distance_histogram(weights, bins: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """How far attention reaches: (``edges [b + 1]``, ``mass [b]``) over |key − query|, each
    bin the average weight per query at those distances. Edges are whole distances; the
    first bin holds distance 0 alone (a query attending to itself)."""
    n, m = weights.shape
    mass = offset_mass(weights)  # [n + m - 1]
    distance = np.abs(np.arange(-(n - 1), m))  # [n + m - 1]
    by_distance = np.bincount(distance, weights=mass)  # [max distance + 1]
    longest = len(by_distance) - 1
    if longest == 0:
        return np.array([0.0, 1.0]), by_distance
    inner = np.unique(np.round(np.geomspace(1, longest + 1, max(1, bins))).astype(int))
    edges = np.concatenate([[0], inner]).astype(float)  # [b + 1]
    if edges[-1] <= longest:
        edges = np.append(edges, longest + 1)
    sums = np.add.reduceat(by_distance, edges[:-1].astype(int))  # [b]
    return edges, sums


@dataclass(frozen=True)
class Sinks:
    """Keys that collect weight from many queries: ``keys [t]`` (most first), ``received [t]``
    (average weight per query), ``uniform`` (what a key gets when attention is spread evenly:
    1 / number of keys) and ``ratio [t]`` = received / uniform."""

    keys: np.ndarray
    received: np.ndarray
    uniform: float
    ratio: np.ndarray


def received_weight(weights) -> np.ndarray:
    """Each key's weight averaged over all queries, ``[m]`` (sums to 1 when every row does)."""
    n, m = weights.shape
    total = np.zeros(m)  # [m]
    for _, block in _row_blocks(weights):
        total += block.sum(axis=0)
    return total / max(n, 1)


def attention_sinks(weights, top: int = 5, threshold: float = 4.0) -> Sinks:
    """The keys receiving the most weight across queries (at most ``top``), kept only where a
    key gets at least ``threshold`` times its even share (1 / m): an attention sink."""
    m = weights.shape[1]
    received = received_weight(weights)  # [m]
    uniform = 1.0 / max(m, 1)
    order = np.argsort(-received, kind="stable")[: max(0, int(top))]  # [t]
    order = order[received[order] >= threshold * uniform]
    return Sinks(order, received[order], uniform, received[order] / uniform)
