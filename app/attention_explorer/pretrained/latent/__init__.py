"""Multi-head latent attention (DeepSeek-V2/V3, Kimi K2): each token's keys and values are
made from one compressed latent ``c_kv`` and one rotary key shared by every head.

Per layer, for ``x [n, d]`` (the layer's normed input)::

    q      = q_b(RMSNorm(q_a(x)))  (or q_proj(x) without a q_lora rank)   # [h, n, nope + rope]
    q      = [q_nope ; RoPE(q_pe)]
    c_kv, k_pe = kv_a(x)                    # [n, kv_lora], [n, rope]: what the cache holds
    c_kv   = RMSNorm(c_kv)
    k_nope, v = kv_b(c_kv) per head         # [h, n, nope], [h, n, v_dim]
    k      = [k_nope ; RoPE(k_pe)]          # the rotary key is one for every head
    out    = softmax(q k^T * scale) v, then o_proj

:mod:`.plan` reads the ranks and widths from config.json (the record's ``latent``),
:mod:`.reader` the tensors, :mod:`.attention` is the model run's block (every stage kept by
:func:`.attention.latent_stages`), :mod:`.session` opens a layer in the explorer and
:mod:`.decode` is a generation step over the latent cache.
"""
