"""Helpers of the tutorial-number tests: attention in float64 straight from Q, K and V, a score
row fed in directly, and "does it round to what the tutorial printed"."""

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs, compute


def attend(Q, K, V, *, scale="sqrt_dk", mask="none", heads=1, **config):
    """Direct-mode attention in float64; Q ``[n, d]`` or ``[h, n, d]``, K/V likewise."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    if Q.ndim == 2:
        Q, K, V = Q[None], K[None], V[None]  # [1, n|m, d]
    cross = Q.shape[1] != K.shape[1]
    cfg = AttentionConfig(
        heads=Q.shape[0],
        d_model=Q.shape[0] * V.shape[2],
        scale=scale,
        mask=mask,
        attention="cross" if cross else "self",
        **config,
    )
    return compute(AttentionInputs(Q=Q, K=K, V=V), cfg, dtype="float64")


def weights_of(scores, V=None, *, scale="none"):
    """Feed a score row straight in: one-hot keys make each score a number of the query."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))  # [n, m]
    m = scores.shape[1]
    V = np.eye(m) if V is None else np.asarray(V, dtype=np.float64)  # [m, d_v]
    return attend(scores, np.eye(m), V, scale=scale)


def printed(actual, shown, decimals):
    """True when ``actual`` rounds to what the tutorial shows at ``decimals`` places."""
    gap = np.abs(np.asarray(actual, dtype=np.float64) - np.asarray(shown, dtype=np.float64))
    return bool(np.all(gap <= 0.5 * 10.0**-decimals + 1e-9))
