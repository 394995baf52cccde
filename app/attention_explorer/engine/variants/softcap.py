"""Logit soft-capping (Gemma 2): the scaled scores squashed into (−cap, cap) before the mask,

    capped = cap · tanh(scaled / cap)

so no score can run away however large q · k grows: small scores pass almost unchanged
(tanh(x) ≈ x near 0), large ones level off just under ±cap.
"""

from __future__ import annotations

import numpy as np


def soft_cap(lib, scaled, cap: float, out=None):
    """``cap · tanh(scaled / cap)`` of ``scaled [c, r, m]`` in ``lib``'s arrays; on numpy
    written into ``out`` when given (it may be ``scaled`` itself)."""
    cap = float(cap)
    if isinstance(scaled, np.ndarray):
        target = np.empty_like(scaled) if out is None else out  # [c, r, m]
        np.divide(scaled, cap, out=target)
        np.tanh(target, out=target)
        target *= cap
        return target
    return cap * lib.xp.tanh(scaled / cap)  # [c, r, m]
