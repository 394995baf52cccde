"""One decoding step's layer as an explorer session: the new token's query against the cache.

:func:`step_session` replays a :class:`~.result.Generation` up to step ``i`` (the prompt, then
each generated token fed, under the generation's own cache policy and dtype) and stops inside
layer ``l`` of step ``i``: Q is that step's query row per head, after QK-norm and RoPE at its
true position; K and V are the layer's cache at that moment, every position fed so far
(``[kv_heads, m, head_dim]``, keys after RoPE, the policy's edits applied); the scale and soft
cap are the model's; what the query may not read (a sliding window, the policy's window, sinks
or evictions) is a custom mask. The session is cross-attention: one query token over the
``m`` cached tokens, in direct mode (Q, K and V are typed, not projected). Computing it gives
exactly the step's attention row (``Generation.steps[i].attentions[l]``); a step the session
cannot reproduce (a stage the engine does not have) is refused by name, never approximated.

:func:`edits_between` turns the learner's edits of K or V in that session into the ``edit``
entries of a cache policy (:mod:`.policy`), and :func:`policy_with_edits` merges them into the
generation's policy, so a rerun of the generation shows what the edit does to the following
steps. Qt-free.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputError, AttentionInputs
from attention_explorer.engine.backend import resolve_backend
from attention_explorer.kernels import ops_for
from attention_explorer.pretrained.architecture import scale_setting
from attention_explorer.pretrained.forward import attention_input, embed, rest_of_layer
from attention_explorer.pretrained.kernel import projections, qk_normed
from attention_explorer.pretrained.open_model import LoadedModel, load_model
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.document import SessionData

from .decode import embed_at, forward_new, held, release
from .errors import GenerationError
from .policy import CachePolicy, policy_dict
from .result import Generation
from .step import attend_new, host, new_caches, rotate_at_positions

#: How far the session's weights may be from the step's row before it is refused (float64).
TOLERANCE = {"float64": 1e-9, "float32": 1e-5}


def _check_index(value, count: int, what: str) -> int:
    """``value`` as an index 0..count-1, else a GenerationError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise GenerationError(what, f"the {what} must be a whole number, not {value!r}")
    if not 0 <= value < count:
        raise GenerationError(what, f"{what} {value} is out of range: there are 0..{count - 1}")
    return int(value)


def replay(loaded: LoadedModel, gen: Generation, step: int, layer: int):
    """The generation replayed up to step ``step``, stopped in layer ``layer``: the step's
    queries ``q [heads, t, d_k]`` (t = the prompt's length at step 0, else 1; after QK-norm
    and RoPE), that layer's cache after they were written (keys ``[kv, m, d_k]``, values
    ``[kv, m, d_v]``, m = the step's position + 1) and the weights ``[heads, t, m]`` the
    generation computed. numpy arrays in the generation's dtype."""
    policy = gen.policy if isinstance(gen.policy, CachePolicy) else CachePolicy()
    dtype = np.dtype(gen.dtype)
    w = held(loaded, gen.dtype, resolve_backend("numpy"))
    n, position = gen.prompt_length, gen.steps[step].position
    m = position + 1
    caches = new_caches(w, m, np.zeros(1, dtype))
    h = embed(w, list(gen.ids[:n]), [0] * n, dtype)  # [n, d]
    for i in range(step):  # the steps before: whole forward passes
        if i:
            h = embed_at(w, gen.ids[n + i - 1], n + i - 1, dtype)  # [1, d]
        forward_new(w, h, caches, policy)
    if step:
        h = embed_at(w, gen.ids[position], position, dtype)  # [1, d]
    start = caches[0].length
    for at in range(layer + 1):  # the step itself, up to the chosen layer
        x = attention_input(w, at, h)  # [t, d]
        weights, a = attend_new(w, at, x, caches[at], policy)  # [h, t, m], [t, d]
        if at < layer:
            h = rest_of_layer(w, at, h, a)  # [t, d]
    cache = caches[layer]
    q = _queries(w, layer, x, start, cache)  # [h, t, d_k]
    return host(q), host(cache.keys[:, :m]), host(cache.values[:, :m]), host(weights)


def _queries(w, layer: int, x, start: int, cache):
    """The queries ``[h, t, d_k]`` of the new tokens ``x [t, d]`` at positions ``start..``
    as the step made them: projected, QK-normed and turned by RoPE; a latent layer's
    (DeepSeek-V3) from its own decode step, run on a copy of the cache so it is left as is."""
    ops = ops_for(x)
    if getattr(w, "latent", None) is not None:
        from attention_explorer.pretrained.latent.decode import latent_new

        scratch = replace(cache, **{f.name: _copy(getattr(cache, f.name)) for f in fields(cache)})
        scratch.length = start
        return latent_new(ops, w, layer, x, start, scratch)[0]
    lw = w.layers[layer]
    q, k, _ = projections(ops, w, lw, x)  # [h, t, d_k], [kv, t, d_k]
    q, k = qk_normed(ops, lw, w.eps, q, k, w.arch.qk_norm_over, w.arch.norm_offset)
    return rotate_at_positions(ops, w, layer, q, k, start)[0]  # [h, t, d_k] at positions start..


def _copy(value):
    """A copy of a cache buffer (an array), or the value itself (a count, None)."""
    return value.copy() if hasattr(value, "copy") and hasattr(value, "shape") else value


def step_session(model, gen: Generation, step: int, layer: int) -> SessionData:
    """Layer ``layer`` of step ``step`` of ``gen`` as a direct-mode cross-attention session
    (see the module docstring): the step's query token over every position fed so far, K and
    V the cache's rows. ``model`` is the generation's model (a folder, a hub id or the
    :class:`LoadedModel`). A GenerationError (one line) for an index out of range, or a step
    the explorer cannot reproduce to the generation's precision."""
    step = _check_index(step, len(gen.steps), "step")
    loaded = load_model(model)
    w0 = loaded.weights
    layer = _check_index(layer, w0.n_layers, "layer")
    try:
        q, keys, values, weights = replay(loaded, gen, step, layer)
    finally:
        release(loaded)  # a model too large to keep converted is not held after the replay
    row = gen.steps[step].attentions[layer]  # [h, m]
    # the replay runs on numpy: a torch generation's rows agree to its dtype's precision
    if not np.allclose(weights[:, -1], row, rtol=0, atol=TOLERANCE[gen.dtype]):
        raise GenerationError(
            "model",
            f"{loaded.name} no longer gives this generation's step {step} (its files changed "
            "since it ran): generate again",
        )
    position, m = gen.steps[step].position, keys.shape[1]
    policy = gen.policy if isinstance(gen.policy, CachePolicy) else CachePolicy()
    visible = policy.visible(np.array([position]), m, w0.window_of(layer))  # [1, m]
    scale, factor = scale_setting(w0.scales[layer], keys.shape[-1])
    lw = w0.layers[layer]  # float64 as read
    sinks = getattr(lw, "sinks", None)  # [heads] gpt-oss's sink logits, else None
    config = AttentionConfig(
        mode="direct",
        heads=w0.heads,
        d_model=w0.d_model,
        d_k=keys.shape[-1],
        d_v=values.shape[-1],
        kv_heads=keys.shape[0] if keys.shape[0] != w0.heads else None,
        scale=scale,
        scale_factor=factor,
        attention="cross",
        **(
            {"mask": "none"}
            if visible.all()
            else {"mask": "custom", "custom_mask": tuple(map(tuple, visible.tolist()))}
        ),
        **({} if w0.score_cap is None else {"softcap": w0.score_cap}),
        **({} if sinks is None else {"attention_sinks": True}),
    )
    inputs = AttentionInputs(
        Q=np.asarray(q[:, -1:], np.float64),  # [h, 1, d_k]: the step's new query
        K=np.asarray(keys, np.float64),  # [kv, m, d_k]
        V=np.asarray(values, np.float64),  # [kv, m, d_v]
        W_O=np.asarray(host(lw.W_O), np.float64),
        b_O=None if lw.b_O is None else np.asarray(host(lw.b_O), np.float64),
        **({} if sinks is None else {"sinks": np.asarray(host(sinks), np.float64)}),
    )
    token = gen.tokens[position]
    rope = " (keys after RoPE, at their positions)" if w0.rotary_of(layer) is not None else ""
    data = SessionData(
        tokens=(token,),
        kv_tokens=tuple(gen.tokens[:m]),
        config=config,
        inputs=inputs,
        name=f"{loaded.name}, step {step}, layer {layer}",
        description=(
            f"Decoding step {step} of {loaded.name}, layer {layer}: the query of “{token}” "
            f"(position {position}) reads the cache of the {m} positions fed so far. "
            f"K and V are the cached vectors{rope}; grey keys are ones the cache policy or "
            "the model's window hides. Edit a K or V number to rerun the generation from this "
            "step with that cached vector changed."
        ),
    )
    _check_reproduces(data, row, gen.dtype)
    return data


def _check_reproduces(data: SessionData, row: np.ndarray, dtype: str) -> None:
    """A GenerationError unless the session's weights ``[h, 1, m]`` are ``row [h, m]``."""
    try:
        mine = compute_session(data, dtype="float64", stages=("weights",))["weights"]
    except AttentionInputError as exc:
        raise GenerationError("explorer", f"this step cannot open in the explorer: {exc}") from None
    if mine.shape[-1] != row.shape[-1] or not np.all(np.abs(mine[:, -1] - row) <= TOLERANCE[dtype]):
        raise GenerationError(
            "explorer",
            "this layer's attention has a step the explorer does not compute, so it does not "
            "open as a session that reproduces it",
        )


def edits_between(before: SessionData, after: SessionData, layer: int) -> list[dict]:
    """The cache edits (``{"layer", "head", "position", "key" | "value"}``, see :mod:`.policy`)
    that turn ``before``'s K and V (a :func:`step_session`) into ``after``'s: one per cached
    vector with any number changed, the whole vector given. Key j of the session is position j."""
    edits = []
    for name, part in (("K", "key"), ("V", "value")):
        old = before.inputs.arrays().get(name)  # [kv, m, d]
        new = after.inputs.arrays().get(name)
        if old is None or new is None or old.shape != new.shape:
            continue
        for head, position in zip(*np.nonzero((old != new).any(axis=-1))):
            vector = [float(x) for x in new[head, position]]
            edits.append(
                {"layer": layer, "head": int(head), "position": int(position), part: vector}
            )
    return edits


def policy_with_edits(policy, edits: list[dict]):
    """``policy`` (None, "full", a dict or a :class:`CachePolicy`) as a dict with ``edits``
    added, each replacing an earlier edit of the same layer, head, position and part."""
    merged = policy_dict(policy)

    def where(e: dict) -> tuple:
        return e["layer"], e["head"], e["position"], "key" if "key" in e else "value"

    new = {where(e) for e in edits}
    kept = [e for e in merged.get("edit", []) if where(e) not in new]
    merged["edit"] = kept + list(edits)
    return merged
