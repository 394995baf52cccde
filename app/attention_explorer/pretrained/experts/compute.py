"""The routed-experts feed-forward, written once against the experts plan
(:class:`~attention_explorer.pretrained.experts.plan.ExpertsPlan`), numpy or torch::

    logits = x W_router (+ b_router)                          # [n, E]
    weights, experts = route(logits)                          # [n, k], [n, k]
    y[t] = sum_s weights[t, s] * expert_{experts[t, s]}(x[t])  # [n, d]
    y += shared(x)                                            # DeepSeek-V3's shared experts

``gated`` experts are ``down(act(x W_gate) * x W_up)`` with the model's activation;
``clamped_swiglu`` (gpt-oss) is ``down((clip(up) + 1) * g * sigmoid(alpha g)) + b`` with
``g = min(gate, limit)``. Experts are summed in expert order, as transformers' plain loop
adds them.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.kernels import ops_for
from attention_explorer.pretrained.experts.record import note
from attention_explorer.pretrained.experts.routing import is_numpy, route


def _expert(w, lw, j: int, x):
    """Expert ``j`` on the rows ``x [m, d]`` routed to it: ``[m, d]``."""
    o = ops_for(x)
    plan = w.arch.experts

    def bias(b):
        return None if b is None else b[j]

    gate = o.linear(x, lw.W_experts_gate[j], bias(lw.b_experts_gate))  # [m, f]
    up = o.linear(x, lw.W_experts_in[j], bias(lw.b_experts_in))  # [m, f]
    if plan.kind == "clamped_swiglu":
        limit = float(plan.get(w.config, "swiglu_limit"))
        alpha = float(plan.get(w.config, "swiglu_alpha"))
        if is_numpy(x):
            gate, up = np.minimum(gate, limit), np.clip(up, -limit, limit)
            inner = (up + 1) * (gate / (1.0 + np.exp(-alpha * gate)))  # [m, f]
        else:
            gate, up = gate.clamp(max=limit), up.clamp(-limit, limit)
            inner = (up + 1) * (gate * (gate * alpha).sigmoid())  # [m, f]
    else:
        inner = o.ACTIVATIONS[w.activation](gate) * up  # [m, f]
    return o.linear(inner, lw.W_experts_out[j], bias(lw.b_experts_out))  # [m, d]


def _rows_of(experts, j: int):
    """(token rows, slots) where expert ``j`` was chosen in ``experts [n, k]``."""
    if is_numpy(experts):
        return np.nonzero(experts == j)
    return (experts == j).nonzero(as_tuple=True)


def _hit(experts) -> list[int]:
    """The experts some token chose, in increasing order."""
    return sorted(int(j) for j in (np.unique(experts) if is_numpy(experts) else experts.unique()))


def routed_feed_forward(w, lw, x):
    """The routed-experts feed-forward of layer weights ``lw`` on ``x [n, d]``: ``[n, d]``."""
    o = ops_for(x)
    plan = w.arch.experts
    logits = o.linear(x, lw.W_router, lw.b_router)  # [n, E]
    weights, experts = route(plan, w.config, logits, lw.router_score_bias)  # [n, k], [n, k]
    y = x.copy() if is_numpy(x) else x.clone()  # [n, d] in x's dtype and device
    y[...] = 0  # zeros (x * 0 would be NaN on an infinite row)
    for j in _hit(experts):
        rows, slots = _rows_of(experts, j)  # [m], [m]: each token picks an expert once
        y[rows] += _expert(w, lw, j, x[rows]) * weights[rows, slots][:, None]  # [m, d]
    shared = plan.shared(w.config)
    if shared:
        act = o.ACTIVATIONS[w.activation]
        inner = act(o.linear(x, lw.W_shared_gate)) * o.linear(x, lw.W_shared_in)  # [n, S f]
        y = y + o.linear(inner, lw.W_shared_out)  # [n, d]
    note(experts, weights, logits, shared)
    return y
