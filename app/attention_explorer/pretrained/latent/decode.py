"""One generation step of a latent-attention layer over its latent cache.

The cache of a latent layer holds, per position, the normed latent ``c_kv [kv_lora]`` and the
rotary key ``k_pe [rope]`` after RoPE (what transformers' ``DeepseekV3Attention`` writes into
its cache: ``kv_lora + rope`` numbers a token, against ``heads · (nope + rope + v_dim)`` for
multi-head attention). Each head's key ``[k_nope ; k_pe]`` and value are ``kv_b`` of the
latent: they are made once for each new position and kept beside it (the views show them;
the bytes reported are the latent's), which gives the numbers of up-projecting the whole
cache at every step, as transformers does, since ``kv_b`` acts on each position alone. A
cache policy's edit of a key or value (``generation/policy.py``) changes those per-head
vectors, which later steps read; the latent and rotary key stay as the model made them.
"""

from __future__ import annotations

from attention_explorer.pretrained.latent.attention import latent_stages


def latent_buffers(w, capacity: int, zeros) -> dict:
    """A latent layer's cache buffers for ``capacity`` positions made by ``zeros(shape)``:
    ``keys [h, capacity, nope + rope]``, ``values [h, capacity, v_dim]`` (up-projected),
    ``latent [capacity, kv_lora]`` and ``rope_key [capacity, rope]``."""
    plan, heads = w.latent, w.heads
    return {
        "keys": zeros((heads, capacity, plan.qk_dim)),
        "values": zeros((heads, capacity, plan.v_dim)),
        "latent": zeros((capacity, plan.kv_lora)),
        "rope_key": zeros((capacity, plan.rope)),
    }


def latent_new(ops, w, layer: int, x, start: int, cache):
    """Layer ``layer``'s queries, keys and values for new tokens ``x [t, d]`` at positions
    ``start .. start + t - 1``: q ``[h, t, nope + rope]``, k ``[h, t, nope + rope]``, v
    ``[h, t, v_dim]``; their latents and rotary keys are written into ``cache.latent`` and
    ``cache.rope_key`` at those positions."""
    stages = latent_stages(ops, w, layer, x, start)
    end = start + x.shape[0]
    cache.latent[start:end] = stages.c_kv  # [t, kv_lora]
    cache.rope_key[start:end] = stages.k_pe  # [t, rope]
    return stages.query(), stages.key(), stages.v
