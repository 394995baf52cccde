"""Fused projections split as transformers splits them, so the rest of the model run sees
the usual separate weights (math orientation ``[in, out]``).

- ``qkv`` laid out in ``blocks`` (GPT-2's ``c_attn``, Phi-3's ``qkv_proj``): the outputs are
  all q, then all k, then all v;
- ``qkv`` laid out per ``heads`` (GPT-NeoX's ``query_key_value``): transformers views the
  output as ``[heads, 3 * d_k]`` and chunks each head into its q, k and v, so output column
  ``h*3*d_k + p*d_k + j`` is part p (q, k, v) of head h, dimension j; the columns are
  reordered to the blocks layout here;
- ``ffn_gate_up`` (Phi-3's ``gate_up_proj``): ``chunk(2)`` of the output, the gate first and
  the up projection second.
"""

from __future__ import annotations

import numpy as np


def heads_to_blocks(heads: int, d_k: int) -> np.ndarray:
    """The column order ``[3 * heads * d_k]`` that turns a per-head fused q/k/v output into
    all q, all k, all v."""
    per_head = np.arange(heads * 3 * d_k).reshape(heads, 3, d_k)  # [heads, q|k|v, d_k]
    return per_head.transpose(1, 0, 2).reshape(-1)  # [3 * heads * d_k]


def fused_qkv(W, b, layout: str, heads: int, d_k: int, dry: bool):
    """A fused ``W [d, 3 heads d_k]`` and ``b`` in the blocks layout (see the module
    docstring). ``dry``: the shape-only stand-ins of a survey are returned as they are."""
    if layout != "heads" or dry:
        return W, b
    order = heads_to_blocks(heads, d_k)  # [3 heads d_k]
    return np.ascontiguousarray(W[:, order]), None if b is None else b[order]


def gate_up(W, b, d_ff: int, contiguous: bool):
    """``(W_gate, b_gate), (W_in, b_in)`` of a fused ``W [d, 2 d_ff]``: the first half of
    the outputs is the gate, the second the up projection (transformers' ``chunk(2)``)."""
    halves = []
    for lo, hi in ((0, d_ff), (d_ff, 2 * d_ff)):
        part = W[:, lo:hi]  # [d, d_ff]
        halves.append(
            (np.ascontiguousarray(part) if contiguous else part, None if b is None else b[lo:hi])
        )
    return halves[0], halves[1]
