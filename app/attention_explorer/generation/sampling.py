"""The next token from the logits: greedy, or sampled with temperature, top-k and top-p.

- ``temperature == 0``: greedy, the first most probable token (as ``argmax`` and
  transformers' ``do_sample=False``); the distribution reported is the model's softmax.
- ``temperature > 0``: ``softmax(logits / temperature)``, then top-k keeps the tokens whose
  logit is at least the k-th largest (ties at the k-th are kept, as transformers' warper
  does), then top-p keeps the most probable tokens in decreasing order while the mass
  *before* each is below p (the smallest set that reaches p), renormalised; one uniform
  number from the seeded generator picks the token by the cumulative sums.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import GenerationError


def check_settings(temperature, top_k, top_p, seed) -> tuple[float, int | None, float | None]:
    """The sampling settings checked; a GenerationError naming the one that is wrong."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise GenerationError("temperature", f"temperature must be a number, not {temperature!r}")
    if not (math.isfinite(temperature) and temperature >= 0):
        raise GenerationError("temperature", f"temperature must be 0 or more, not {temperature}")
    if top_k is not None and (
        isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1
    ):
        raise GenerationError("top_k", f"top_k must be None or a whole number >= 1, not {top_k!r}")
    if top_p is not None and (
        isinstance(top_p, bool) or not isinstance(top_p, (int, float)) or not (0 < top_p <= 1)
    ):
        raise GenerationError("top_p", f"top_p must be None or in (0, 1], not {top_p!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise GenerationError("seed", f"seed must be a whole number >= 0, not {seed!r}")
    return float(temperature), None if top_k is None else int(top_k), top_p


def softmax(z: np.ndarray) -> np.ndarray:
    """Softmax of ``z [vocab]`` (float64; -inf gives exactly 0)."""
    e = np.exp(z - z.max())  # [vocab]
    return e / e.sum()


def distribution(logits: np.ndarray, temperature: float, top_k, top_p) -> np.ndarray:
    """The distribution the next token is drawn from, ``[vocab]`` float64 (module docstring)."""
    z = np.asarray(logits, dtype=np.float64)  # [vocab]
    if temperature == 0:
        return softmax(z)
    z = z / temperature
    if top_k is not None and top_k < z.size:
        kth = np.partition(z, -top_k)[-top_k]
        z = np.where(z >= kth, z, -np.inf)  # [vocab]
    probs = softmax(z)
    if top_p is not None and top_p < 1:
        order = np.argsort(-probs, kind="stable")  # [vocab] most probable first
        before = np.cumsum(probs[order]) - probs[order]  # mass before each
        drop = order[before >= top_p]
        probs[drop] = 0.0
        probs /= probs.sum()
    return probs


def choose(probs: np.ndarray, logits: np.ndarray, greedy: bool, rng) -> tuple[int, int]:
    """(the token, its rank): greedy takes the first argmax of ``logits``, else one uniform
    draw of ``rng`` through the cumulative sums of ``probs``. The rank counts the tokens with
    a strictly larger logit (0: the model's most probable)."""
    if greedy:
        token = int(np.argmax(logits))
    else:
        cumulative = np.cumsum(probs)  # [vocab]
        u = rng.random() * cumulative[-1]
        token = int(np.searchsorted(cumulative, u, side="right"))
        token = min(token, probs.size - 1)
        while probs[token] == 0:  # u fell on a boundary: the previous kept token
            token -= 1
    rank = int(np.count_nonzero(np.asarray(logits) > logits[token]))
    return token, rank
