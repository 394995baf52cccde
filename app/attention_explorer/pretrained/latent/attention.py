"""The model run's latent-attention block, numpy or torch (``ops`` from
:mod:`attention_explorer.kernels`), with every stage kept for the explorer and the cache.

:func:`latent_stages` makes the stages of one layer for tokens at positions
``start .. start + n - 1``; :func:`attend_latent` is the block the model run calls
(through ``kernel.attend``): weights ``[heads, n, n]`` and the output ``[n, d]``, with
knocked-out heads' columns of the concatenated heads zeroed before ``o_proj``.

RoPE is transformers' ``apply_rotary_pos_emb_interleave`` when ``rope_interleave`` is set:
the rotary part's dimensions are taken evens first, then odds, and turned as rotate-half
pairs, so the rotated q_pe and k_pe come out in that order (as transformers caches them);
else the plain rotate-half of ``apply_rotary_pos_emb``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from array_api_compat import array_namespace

from attention_explorer.kernels import ops_for


@dataclass(frozen=True, eq=False)
class LatentStages:
    """One layer's latent attention on ``n`` tokens (arrays of the run's library):

    ``c_q [n, q_lora]`` (the normed query latent; None without a q_lora rank),
    ``q_nope [h, n, nope]``, ``q_pe [h, n, rope]`` (after RoPE),
    ``c_kv [n, kv_lora]`` (the normed key/value latent: what the cache holds),
    ``k_pe [n, rope]`` (the one rotary key of every head, after RoPE: cached too),
    ``k_nope [h, n, nope]`` and ``v [h, n, v_dim]`` (``kv_b`` of ``c_kv``, per head)."""

    c_q: object
    q_nope: object
    q_pe: object
    c_kv: object
    k_pe: object
    k_nope: object
    v: object

    def query(self):
        """Each head's query ``[h, n, nope + rope]``: ``[q_nope ; q_pe]`` (a new array)."""
        return array_namespace(self.q_nope).concat([self.q_nope, self.q_pe], axis=-1)

    def key(self):
        """Each head's key ``[h, n, nope + rope]``: ``[k_nope ; k_pe]``, k_pe the same in
        every head (a new array)."""
        xp = array_namespace(self.k_nope)
        shared = xp.broadcast_to(self.k_pe[None], (self.k_nope.shape[0], *self.k_pe.shape))
        return xp.concat([self.k_nope, shared], axis=-1)


def turn(ops, x, cos, sin, interleave: bool):
    """RoPE on ``x [.., n, rope]`` with ``cos, sin [n, rope]``: interleaved pairs (evens
    first, then odds, then rotate-half) or rotate-half pairs."""
    if interleave:
        x = array_namespace(x).concat([x[..., 0::2], x[..., 1::2]], axis=-1)  # [.., n, rope]
    return ops.rotate(x, cos, sin)


def rope_tables(ops, rotary, start: int, n: int, like):
    """``cos, sin [n, rope]`` of positions ``start .. start + n - 1`` (times the scaling's
    attention factor), in ``like``'s library and dtype."""
    where = np.arange(start, start + n)  # [n]
    cos, sin = ops.rotation_tables(where, rotary.frequencies(start + n), like=like)
    factor = rotary.factor
    return (cos, sin) if factor == 1.0 else (cos * factor, sin * factor)


def latent_stages(ops, w, layer: int, x, start: int = 0) -> LatentStages:
    """The stages of layer ``layer`` for ``x [n, d]`` at positions ``start ..``."""
    lw, plan, heads = w.layers[layer], w.latent, w.heads
    if lw.W_q_a is not None:  # q through the q_lora rank
        c_q = ops.rms_norm(
            ops.linear(x, lw.W_q_a, lw.b_q_a), lw.q_a_norm, None, plan.eps
        )  # [n, q_lora]
        q = ops.linear(c_q, lw.W_q_b)  # [n, h*(nope+rope)]
    else:
        c_q, q = None, ops.linear(x, lw.W_Q, lw.b_Q)  # [n, h*(nope+rope)]
    q = ops.split_heads(q, heads, contiguous=True)  # [h, n, nope+rope]
    q_nope, q_pe = q[..., : plan.nope], q[..., plan.nope :]  # [h, n, nope], [h, n, rope]
    compressed = ops.linear(x, lw.W_kv_a, lw.b_kv_a)  # [n, kv_lora + rope]
    c_kv = ops.rms_norm(compressed[:, : plan.kv_lora], lw.kv_a_norm, None, plan.eps)  # [n, kv_lora]
    k_pe = compressed[:, plan.kv_lora :]  # [n, rope]
    rotary = w.rotary_of(layer)
    if rotary is not None:
        cos, sin = rope_tables(ops, rotary, start, x.shape[0], like=x)  # [n, rope]
        q_pe = turn(ops, q_pe, cos, sin, plan.interleave)  # [h, n, rope]
        k_pe = turn(ops, k_pe, cos, sin, plan.interleave)  # [n, rope]
    k_nope, v = up_project(ops, w, layer, c_kv)
    return LatentStages(c_q, q_nope, q_pe, c_kv, k_pe, k_nope, v)


def up_project(ops, w, layer: int, c_kv):
    """``kv_b`` of latents ``c_kv [m, kv_lora]``: each head's ``k_nope [h, m, nope]`` and
    ``v [h, m, v_dim]``."""
    kv = ops.linear(c_kv, w.layers[layer].W_kv_b)  # [m, h*(nope+v)]
    kv = ops.split_heads(kv, w.heads, contiguous=True)  # [h, m, nope+v]
    return kv[..., : w.latent.nope], kv[..., w.latent.nope :]


def attend_latent(w, layer: int, x, knocked: Iterable[int] = (), out=None):
    """Layer ``layer``'s latent attention on ``x [n, d]``: weights ``[heads, n, n]`` (in
    ``out`` when given, as ``kernel.attend``) and the block's output ``[n, d]``."""
    ops = ops_for(x)
    stages = latent_stages(ops, w, layer, x)
    q, k = stages.query(), stages.key()  # [h, n, nope+rope] each
    v = stages.v if isinstance(stages.v, np.ndarray) else stages.v.contiguous()  # [h, n, v_dim]
    blocked = ops.blocked_keys(x.shape[0], w.causal, w.window_of(layer), getattr(x, "device", None))
    p, mixed = ops.attention(q, k, v, w.scales[layer], blocked, out)  # [h, n, n], [h, n, v]
    concat = ops.knock_out(ops.merge_heads(mixed), tuple(knocked), w.heads)  # [n, h*v_dim]
    lw = w.layers[layer]
    return p, ops.linear(concat, lw.W_O, lw.b_O)  # [h, n, n], [n, d]


def head_values(w, layer: int, x):
    """The values each head of latent layer ``layer`` reads for ``x [n, d]``: ``[heads, n,
    v_dim]``, its ``kv_b`` up-projection of each token's latent (what the causal tools
    patch and attribute head by head)."""
    return latent_stages(ops_for(x), w, layer, x).v
