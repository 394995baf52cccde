"""Every primitive of kernels/numpy_ops.py against its twin in kernels/torch_ops.py, in float64.

The cases are keyed by primitive name: a primitive added to one namespace only, or to both
without a case here, fails :func:`test_both_namespaces_list_the_same_primitives` or
:func:`test_every_primitive_has_a_parity_case`.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.kernels import numpy_ops, ops_for, tables
from attention_explorer.kernels.names import ACTIVATION_PRIMITIVES, PRIMITIVES

torch = pytest.importorskip("torch")
torch_ops = pytest.importorskip("attention_explorer.kernels.torch_ops")

RNG = np.random.default_rng(11)
TOL = {"rtol": 1e-12, "atol": 1e-13}


def _t(a):
    """numpy -> torch, None and non-arrays as they are."""
    return torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a


def _n(a):
    """torch -> numpy (recursively for tuples and lists)."""
    if isinstance(a, (tuple, list)):
        return type(a)(_n(x) for x in a)
    return a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else a


def _same(name, run):
    """Run ``run(ops, convert)`` on both namespaces and compare the results."""
    ours = run(numpy_ops, lambda a: np.array(a) if isinstance(a, np.ndarray) else a)
    theirs = _n(run(torch_ops, _t))
    if isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs), name
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, err_msg=name, **TOL)
    elif isinstance(ours, np.ndarray):
        assert ours.shape == tuple(theirs.shape), name
        np.testing.assert_allclose(ours, theirs, err_msg=name, **TOL)
    else:
        assert ours == theirs, name


class _Decoder:
    """A [vocab, d] table read a block at a time, as StoredTable does."""

    def __init__(self, table, to):
        self.table, self.to, self.shape = table, to, table.shape

    def blocks(self, dtype):
        for lo in range(0, self.shape[0], 3):
            yield lo, self.to(self.table[lo : lo + 3])


Q = RNG.normal(size=(3, 5, 4))  # [c, n, d_k]
K = RNG.normal(size=(3, 6, 4))  # [c, m, d_k]
V = RNG.normal(size=(3, 6, 2))  # [c, m, d_v]
SCORES = RNG.normal(size=(3, 5, 6)) * 3  # [c, n, m]
ALLOWED = np.tri(5, 6, dtype=bool)  # [n, m]
ALLOWED[1] = False  # a row with no allowed key
X = RNG.normal(size=(5, 8)) * 2  # [n, d]
W, B = RNG.normal(size=(8, 6)), RNG.normal(size=6)
GAMMA, BETA = RNG.normal(size=8), RNG.normal(size=8)  # [d]
TABLE = RNG.normal(size=(7, 8))  # [vocab, d]
INV = tables.inverse_frequencies(4, 10000.0)  # [d_k/2]
MASKED = np.where(ALLOWED, SCORES, -np.inf)  # [c, n, m]

CASES = {
    "split_heads": lambda o, c: o.split_heads(c(X), 2, contiguous=True),
    "merge_heads": lambda o, c: o.merge_heads(c(Q)),
    "linear": lambda o, c: (o.linear(c(X), c(W), c(B)), o.linear(c(X), c(W))),
    "linear_split": lambda o, c: o.linear_split(c(X), c(W), c(B), (2, 2, 2)),
    "repeat_kv": lambda o, c: o.repeat_kv(c(K), 2),
    "rotate_half": lambda o, c: o.rotate_half(c(Q)),
    "rotation_tables": lambda o, c: o.rotation_tables(np.arange(5) + 2, INV, like=c(Q)),
    "rotate": lambda o, c: o.rotate(c(Q), *o.rotation_tables(np.arange(5), INV, like=c(Q))),
    "causal_mask": lambda o, c: o.causal_mask(5, 6),
    "window_mask": lambda o, c: o.window_mask(5, 6, 2),
    "padding_mask": lambda o, c: o.padding_mask(5, 6, [1, 4]),
    "blocked_keys": lambda o, c: (o.blocked_keys(6, True, 3), o.blocked_keys(6, False, 2)),
    "score": lambda o, c: o.score(c(Q), c(K)),
    "scale": lambda o, c: o.scale(c(SCORES), 0.3),
    "scaled_score": lambda o, c: o.scaled_score(c(Q), c(K), 0.7),
    "mask_scores": lambda o, c: (
        o.mask_scores(c(SCORES), c(ALLOWED)),
        o.mask_scores(c(SCORES), blocked=c(~ALLOWED)),
        o.mask_scores(c(SCORES), c(ALLOWED), out=c(np.empty_like(SCORES))),
    ),
    "softmax": lambda o, c: (
        o.softmax(c(MASKED), empty_rows=True),
        o.softmax(c(MASKED[:, 2:]), out=c(np.empty_like(MASKED[:, 2:])), shift=False),
    ),
    "sparsemax": lambda o, c: o.sparsemax(c(MASKED), empty_rows=True),
    "sigmoid": lambda o, c: o.sigmoid(c(MASKED)),
    "normalize": lambda o, c: [o.normalize(k, c(MASKED), True) for k in o.NORMALIZERS],
    "NORMALIZERS": lambda o, c: ",".join(o.NORMALIZERS),
    "scores_bounded": lambda o, c: (o.scores_bounded(c(Q), c(K)), o.scores_bounded(c(Q * 9), c(K))),
    "combine": lambda o, c: o.combine(c(SCORES), c(V)),
    "attention": lambda o, c: o.attention(
        c(Q[:, :, :]), c(K[:, :5]), c(V[:, :5]), 0.5, c(~np.tri(5, 5, dtype=bool))
    ),
    "knock_out": lambda o, c: o.knock_out(c(X), [1, 3], 4),
    "layer_norm": lambda o, c: (o.layer_norm(c(X), c(GAMMA), c(BETA), 1e-5),),
    "rms_norm": lambda o, c: (o.rms_norm(c(X), c(GAMMA), None, 1e-6),),
    "NORMS": lambda o, c: [o.NORMS[k](c(X), c(GAMMA), c(BETA), 1e-5) for k in sorted(o.NORMS)],
    "gelu": lambda o, c: o.gelu(c(X)),
    "gelu_tanh": lambda o, c: o.gelu_tanh(c(X)),
    "gelu_fast": lambda o, c: o.gelu_fast(c(X)),
    "quick_gelu": lambda o, c: o.quick_gelu(c(X)),
    "relu": lambda o, c: o.relu(c(X)),
    "silu": lambda o, c: o.silu(c(X)),
    "ACTIVATIONS": lambda o, c: [o.ACTIVATIONS[k](c(X)) for k in sorted(o.ACTIVATIONS)],
    "logits": lambda o, c: o.logits(c(X), _Decoder(TABLE, c)),
    "all_finite": lambda o, c: (
        o.all_finite(c(X), c(Q)),
        o.all_finite(c(X), c(np.array([1.0, np.nan]))),
        o.all_finite(c(np.array([-np.inf]))),
        o.all_finite(c(np.zeros((0, 3)))),
    ),
}


def test_both_namespaces_list_the_same_primitives():
    assert list(numpy_ops.__all__) == list(torch_ops.__all__) == list(PRIMITIVES)
    for ops in (numpy_ops, torch_ops):
        missing = [name for name in ops.__all__ if not hasattr(ops, name)]
        assert not missing, (ops.LIBRARY, missing)
    assert set(numpy_ops.ACTIVATIONS) == set(torch_ops.ACTIVATIONS) == set(ACTIVATION_PRIMITIVES)
    for ops in (numpy_ops, torch_ops):
        for name, primitive in ACTIVATION_PRIMITIVES.items():
            assert ops.ACTIVATIONS[name] is getattr(ops, primitive), (ops.LIBRARY, name)
    assert set(numpy_ops.NORMS) == set(torch_ops.NORMS)
    assert set(numpy_ops.NORMALIZERS) == set(torch_ops.NORMALIZERS)


def test_every_primitive_has_a_parity_case():
    assert sorted(CASES) == sorted(numpy_ops.__all__)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_and_torch_agree(name):
    _same(name, CASES[name])


def test_fully_masked_rows_give_zeros_and_blocked_keys_weight_zero():
    for ops, c in ((numpy_ops, np.array), (torch_ops, _t)):
        for kind in ops.NORMALIZERS:
            weights = _n(ops.normalize(kind, c(MASKED), empty_rows=True))  # [c, n, m]
            assert np.isfinite(weights).all(), (ops.LIBRARY, kind)
            assert (weights[:, 1] == 0).all() and (weights[:, ~ALLOWED] == 0).all()


def test_softmax_writes_into_out_and_in_place():
    out = np.empty_like(MASKED)
    assert numpy_ops.softmax(MASKED, out=out) is out
    again = MASKED.copy()
    numpy_ops.softmax(again, out=again)
    np.testing.assert_array_equal(again, out)
    np.testing.assert_allclose(out[:, 2:].sum(-1), 1.0, rtol=1e-14)


def test_torch_attention_writes_into_a_numpy_buffer_on_the_cpu():
    out = np.zeros((3, 5, 5))
    blocked = torch.from_numpy(~np.tri(5, 5, dtype=bool))
    weights, _ = torch_ops.attention(_t(Q), _t(K[:, :5]), _t(V[:, :5]), 0.5, blocked, out)
    assert weights is out and np.allclose(out.sum(-1), 1.0)


def test_ops_for_picks_by_array_and_by_name():
    assert ops_for(np.zeros(2)) is numpy_ops and ops_for("numpy") is numpy_ops
    assert ops_for(torch.zeros(2)) is torch_ops and ops_for("torch") is torch_ops
    with pytest.raises(ValueError, match="jax"):
        ops_for("jax")
    with pytest.raises(TypeError):
        ops_for([1.0, 2.0])
