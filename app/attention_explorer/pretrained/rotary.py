"""What the rotary families (Llama, Qwen2, Mistral) add to the forward pass: RoPE on q and k
per head before the scores, and Mistral's sliding window as a mask.

The rotation itself is the kernels' (``rotation_tables`` and ``rotate`` of
:mod:`attention_explorer.kernels`: rotate-half pairs i and i + d_k/2, positions 0..n-1,
``llama3`` and ``linear`` frequency scaling). Here the checkpoint's settings are read
(``rope_theta``, ``rope_scaling`` or transformers 5's ``rope_parameters``; other scaling
types or keys are refused naming the key the config used) and an
engine session is built for a rotary layer.

Whenever the engine's own RoPE setting (``positional="rope"`` with ``rope_theta``,
``rope_scaling`` and ``rope_factor``) gives exactly the checkpoint's inverse frequencies, the
layer opens as an ordinary projection session: X is the layer's normed input, W_Q, W_K, W_V,
W_O and their biases are the model's, and the engine rotates q and k itself (so W_Q and W_K
can be edited). Otherwise (a ``llama3`` scaling whose ``low_freq_factor``,
``high_freq_factor`` or ``original_max_position_embeddings`` differ from the engine's
Llama 3.1 values) it falls back to direct mode with the rotated ``Q [heads, n, d_k]``,
``K [kv_heads, n, d_k]``, ``V`` and the model's ``W_O``, and :func:`rotary_note` says why.

A layer with QK-norm (Qwen3: an RMSNorm with its own weights on each head's q and k before
RoPE; Gemma 3's times 1 + w; OLMo 2's over every head together) opens in projection mode too,
with the engine's QK-norm stage and the layer's ``q_norm``/``k_norm`` weights as the session's
(editable); a score soft cap (Gemma 2) becomes the session's ``softcap``.

The sliding window, as transformers applies it: query i sees key j when ``j <= i`` and
``i - j < window`` (a key ``window`` or more positions back is hidden): the session's causal
mask with its ``window`` (each layer's own, for models with local and global layers).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs
from attention_explorer.engine.config import (
    DEFAULT_THETA,
    ROPE_PARAMETERS,
    SCALING_TYPES,
    RopeScaling,
    inverse_frequencies,
)
from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.kernels import numpy_ops as ops
from attention_explorer.pretrained.model_errors import ModelError

#: Keys of a checkpoint's rope dict that do not change the numbers (or are read elsewhere).
_IGNORED_KEYS = frozenset({"rope_type", "type", "rope_theta"})

#: The keys each scaling type reads, as transformers' ``modeling_rope_utils`` does.
_KNOWN_KEYS = {
    "default": set(),
    "linear": {"factor"},
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
    "dynamic": {"factor"},
    "yarn": {
        "factor",
        "original_max_position_embeddings",
        "attention_factor",
        "beta_fast",
        "beta_slow",
        "mscale",
        "mscale_all_dim",
        "truncate",
    },
    "longrope": {
        "factor",
        "original_max_position_embeddings",
        "attention_factor",
        "short_factor",
        "long_factor",
    },
}
#: The kinds whose pretraining context (``original_max_position_embeddings``) a top-level
#: config key overrides (transformers' ``standardize_rope_params``).
_ORIGINAL_KINDS = ("llama3", "yarn", "longrope")


def scaling_from_checkpoint(
    mapping: Mapping | None,
    context: Mapping | None = None,
    partial: bool = False,
    kinds: Mapping[str, str] | None = None,
) -> RopeScaling:
    """The :class:`RopeScaling` of a checkpoint's ``rope_scaling`` (or ``rope_parameters``)
    dict; None: default. Keys that would change the numbers and are not implemented are
    refused by name (AttentionInputError).

    ``context``: the config.json the dict came from, for what the long-context kinds read
    outside it (``max_position_embeddings``; a top-level ``original_max_position_embeddings``
    wins over the dict's, as in transformers, and is the dict's default with
    ``max_position_embeddings``). ``partial``: the family rotates part of each head, so a
    ``partial_rotary_factor`` in the dict is read elsewhere (else one other than 1 is refused).
    ``kinds``: the type names the family accepts and the kind each means (Phi-3 reads ``su``
    and ``yarn`` as ``longrope``); None: every supported type as itself."""
    if mapping is None:
        return RopeScaling()
    context = {} if context is None else context
    named = "rope_type" if "rope_type" in mapping else "type"
    given = str(mapping.get("rope_type", mapping.get("type", "default")))
    accepted = kinds if kinds is not None else {kind: kind for kind in SCALING_TYPES}
    if given not in accepted:
        raise AttentionInputError(
            "rope_scaling",
            f"{named} {given!r} is not implemented; supported: {', '.join(accepted)}",
        )
    kind = accepted[given]
    known = _KNOWN_KEYS[kind]
    for key, value in mapping.items():
        if key in _IGNORED_KEYS or key in known:
            continue
        if key == "partial_rotary_factor" and (partial or float(value) == 1.0):
            continue
        raise AttentionInputError(
            "rope_scaling", f"the key {key!r} of a {given!r} rope scaling is not implemented"
        )
    values = {key: mapping[key] for key in known if key in mapping}
    if kind in _ORIGINAL_KINDS:
        top = context.get("original_max_position_embeddings")
        if top is not None:
            values["original_max_position_embeddings"] = top
        elif "original_max_position_embeddings" not in values and "max_position_embeddings" in (
            context
        ):
            values["original_max_position_embeddings"] = context["max_position_embeddings"]
    if kind in ("dynamic", "yarn", "longrope"):
        values.update(_long_context(kind, values, context))
    if "original_max_position_embeddings" in values:
        values["original_max_position_embeddings"] = int(values["original_max_position_embeddings"])
    return RopeScaling(kind=kind, **values)


def _number(key: str, value) -> float:
    """A rope setting that must be a number, as float; AttentionInputError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AttentionInputError("rope_scaling", f"{key} is {value!r}; expected a number")
    return float(value)


def _long_context(kind: str, values: dict, context: Mapping) -> dict:
    """The fields of a dynamic, yarn or longrope scaling beyond the dict's plain numbers: the
    model's context length, a missing or null factor (yarn and longrope: the ratio of the
    context to the original one, as transformers does), yarn's ``beta_fast``/``beta_slow``
    defaults (32 and 1 when absent or 0) and longrope's factor lists as tuples."""
    limit = context.get("max_position_embeddings")
    if limit is None:
        raise AttentionInputError(
            "rope_scaling", f"a {kind} rope scaling needs config.json's max_position_embeddings"
        )
    out = {"max_position_embeddings": int(limit)}
    if values.get("factor") is None:
        if kind == "dynamic":
            raise AttentionInputError("rope_scaling", "a 'dynamic' rope scaling needs a factor")
        out["factor"] = int(limit) / int(values["original_max_position_embeddings"])
    for key in ("factor", "attention_factor", "mscale", "mscale_all_dim"):
        if values.get(key) is not None:
            out[key] = _number(key, values[key])
    if kind == "yarn":
        out["beta_fast"] = _number("beta_fast", values.get("beta_fast") or 32)
        out["beta_slow"] = _number("beta_slow", values.get("beta_slow") or 1)
        out["truncate"] = bool(values.get("truncate", True))
    for key in ("short_factor", "long_factor"):
        if key in values:
            given = values[key]
            if not isinstance(given, (list, tuple)):
                raise AttentionInputError("rope_scaling", f"{key} is {given!r}; expected a list")
            out[key] = tuple(_number(key, v) for v in given)
    return out


def _rope_settings(config: Mapping, arch=None) -> tuple[float, RopeScaling]:
    """A rotary checkpoint's (theta, scaling) from ``rope_scaling`` or transformers 5's
    ``rope_parameters`` (the first wins, as in transformers) and the base: the dict's
    ``rope_theta``, else config.json's ``rope_theta``, else GPT-NeoX's ``rotary_emb_base``; a
    scaling type or key not implemented is a ModelError naming the key the config used.
    ``arch``: the family's record, for its rope types, partial rotary and original context."""
    legacy, params = config.get("rope_scaling"), config.get("rope_parameters")
    if arch is None:  # the config's own family (its partial rotary, rope types, context)
        arch = _family(config)
    context = dict(config)
    if arch is not None and arch.original_context:
        context.setdefault("original_max_position_embeddings", arch.original_context)
    partial = bool(arch is not None and arch.partial_rotary)
    kinds = arch.rope_kinds if arch is not None else None
    scalings = {}  # each is checked (an unsupported type is refused, naming its key)
    for key, given in (("rope_scaling", legacy), ("rope_parameters", params)):
        if isinstance(given, Mapping):
            scalings[key] = _scaling(given, key, context, partial, kinds)
    theta = None
    for given in (legacy, params):
        if theta is None and isinstance(given, Mapping):
            theta = given.get("rope_theta")
    for key in ("rope_theta", "rotary_emb_base"):
        if theta is None:
            theta = config.get(key)
    chosen = scalings.get("rope_scaling", scalings.get("rope_parameters", RopeScaling()))
    return float(theta or DEFAULT_THETA), chosen


def _family(config: Mapping):
    """The architecture record of ``config``'s model_type, or None when it names none."""
    from attention_explorer.pretrained.families import architecture_for

    try:
        return architecture_for(config)
    except ModelError:
        return None


def rope_frequencies(config: Mapping, d_k: int) -> np.ndarray:
    """The ``[d_k/2]`` inverse frequencies of a rotary checkpoint's config, float64.

    Reads ``rope_theta`` and ``rope_scaling`` (or the newer ``rope_parameters``); a scaling
    type or key not implemented is a ModelError naming it.
    """
    theta, scaling = _rope_settings(config)
    try:
        return inverse_frequencies(d_k, theta, scaling)
    except AttentionInputError as exc:
        raise ModelError("config", f"config.json: {exc.message}") from None


def engine_rope(w) -> tuple[dict | None, str]:
    """The engine settings (``positional="rope"``, ``rope_theta``, ``rope_scaling``,
    ``rope_factor`` and, when only part of each head turns, ``rotary_fraction``) that
    reproduce ``w``'s rotation exactly, with ""; or (None, why not).

    The engine's config carries only a scaling kind and a factor (llama3's other parameters
    are Llama 3.1's) and turns the first ``int(d_k × rotary_fraction)`` dimensions; the check
    is that it turns as many as the model and that its inverse frequencies equal the model's.
    """
    plan = w.rotary  # the model's RoPE as the run applies it
    if plan is not None:
        theta, scaling, turned = plan.theta, plan.scaling, plan.rotary_dim
    else:
        (theta, scaling), turned = _rope_settings(w.config), w.d_k
    settings = {
        "positional": "rope",
        "rope_theta": theta,
        "rope_scaling": scaling.kind,
        "rope_factor": float(scaling.factor),
    }
    if turned != w.d_k:  # partial rotary (GPT-NeoX, Phi, StableLM)
        settings["rotary_fraction"] = turned / w.d_k
    default = RopeScaling()
    extra = {  # llama3's factors, the long-context kinds' settings: the session's own
        name: getattr(scaling, name)
        for name in ROPE_PARAMETERS
        if getattr(scaling, name) != getattr(default, name)
    }
    if extra:
        settings["rope_parameters"] = tuple(sorted(extra.items()))
    try:
        config = AttentionConfig(d_k=w.d_k, **settings)
        engine = config.rope_scaling_record()  # what it computes
    except AttentionInputError as exc:
        return None, f"its RoPE is not an engine setting ({exc.message})"
    if config.rotary_dims != turned:
        return None, f"the engine cannot turn exactly {turned} of {w.d_k} dimensions"
    if engine != scaling:
        differ = [
            f"{name} {getattr(scaling, name)} (the engine uses {getattr(engine, name)})"
            for name in ("low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
            if getattr(scaling, name) != getattr(engine, name)
        ]
        return None, f"its {scaling.kind} rope scaling has " + (", ".join(differ) or "settings")
    if not np.array_equal(inverse_frequencies(turned, theta, engine), w.rope):  # [r/2]
        # (dynamic and longrope: both for a text within the original context)
        return None, "the engine's RoPE frequencies differ from the checkpoint's"
    return settings, ""


def qk_norm_settings(w) -> tuple[dict | None, str]:
    """The engine settings of ``w``'s QK-norm (``qk_norm``, ``qk_norm_width``,
    ``qk_norm_eps``), {} without one; or (None, why the engine cannot express it)."""
    arch = w.arch
    if not arch.qk_norm:
        return {}, ""
    offset = float(arch.norm_offset)
    styles = {0.0: "rms", 1.0: "rms_one_plus"}
    if offset not in styles:
        return None, f"its QK-norm multiplies by {offset:g} + w, which the engine cannot express"
    return {
        "qk_norm": styles[offset],
        "qk_norm_width": arch.qk_norm_over,
        "qk_norm_eps": float(w.eps),
    }, ""


def direct_reason(w) -> str:
    """Why a layer of ``w`` opens in direct mode (see the module docstring), or "" when the
    engine's projection mode (its RoPE, QK-norm, soft cap and window) reproduces it."""
    settings, why = qk_norm_settings(w)
    if settings is None:
        return why
    if w.rope is None:
        return ""
    settings, why = engine_rope(w)
    return "" if settings is not None else f"{why}, which the engine's RoPE setting cannot express"


def rotary_note(w) -> str:
    """A sentence for the session description when a layer opens in direct mode (see the
    module docstring), else ""."""
    why = direct_reason(w)
    if not why:
        return ""
    done = "normed and rotated" if w.arch.qk_norm else "rotated"
    return (
        f" Q and K are given already {done} (direct mode), so W_Q and W_K cannot be edited: {why}."
    )


def _scaling(rope: Mapping, key: str, context=None, partial=False, kinds=None) -> RopeScaling:
    """The scaling of the config's ``key`` (``rope_scaling``, or ``rope_parameters`` as
    transformers 5 writes it); a ModelError naming that key when it is refused."""
    try:
        return scaling_from_checkpoint(rope, context, partial, kinds)
    except AttentionInputError as exc:
        raise ModelError("config", f"config.json {key}: {exc.message}") from None


def rotate(x: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """``x [heads, n, d_k]`` (numpy) rotated by position 0..n-1, in x's dtype (the angles in
    float64): the kernels' rotation with the model's frequencies."""
    cos, sin = ops.rotation_tables(np.arange(x.shape[-2]), inv_freq, like=x)  # [n, d_k]
    return ops.rotate(x, cos, sin)  # [heads, n, d_k]


def _layer_window(w, layer: int) -> int | None:
    """Layer ``layer``'s sliding window (a model with local and global layers), else the
    model's."""
    return w.window_of(layer)


def _mask(w, layer: int) -> dict:
    """The layer's mask settings: causal (or none), with its sliding window when it has one
    (the engine's ``window``: query i sees key j when ``i - j < window``)."""
    return {"mask": "causal" if w.causal else "none", "window": _layer_window(w, layer)}


def rotary_parts(w, layer: int, x: np.ndarray, scale: tuple[str, float]):
    """The engine's (config, inputs) for rotary or QK-norm layer ``layer`` on ``x [n, d]``:
    projection mode with the engine's RoPE, QK-norm (the layer's q_norm and k_norm weights as
    the session's), soft cap and window when they reproduce the model's, else direct mode with
    the normed and rotated q and k (see the module docstring). ``scale`` is (scale,
    scale_factor)."""
    lw = w.layers[layer]
    shared = {
        "heads": w.heads,
        "d_model": w.d_model,
        "d_k": w.d_k,
        "kv_heads": w.kv_heads if w.kv_heads != w.heads else None,
        "scale": scale[0],
        "scale_factor": scale[1],
        "softcap": w.score_cap,
        **_mask(w, layer),
    }
    if not direct_reason(w):
        rope = {}
        if w.rope is not None:
            rope, _ = engine_rope(w)
        norm, _ = qk_norm_settings(w)
        d_v = lw.W_V.shape[1] // w.kv_heads
        config = AttentionConfig(mode="projection", d_v=d_v, **shared, **rope, **norm)
        inputs = lw.projection_inputs(x)
        if norm:
            inputs = inputs.with_changes(q_norm=lw.q_norm, k_norm=lw.k_norm)
        return config, inputs
    q = ops.split_heads(ops.linear(x, lw.W_Q, lw.b_Q), w.heads)  # [h, n, d_k]
    k = ops.split_heads(ops.linear(x, lw.W_K, lw.b_K), w.kv_heads)  # [kv, n, d_k]
    v = ops.split_heads(ops.linear(x, lw.W_V, lw.b_V), w.kv_heads)  # [kv, n, d_v]
    if lw.q_norm is not None:  # QK-norm over d_k, before RoPE
        q, k = ops.rms_norm(q, lw.q_norm, None, w.eps), ops.rms_norm(k, lw.k_norm, None, w.eps)
    if w.rope is not None:
        q, k = rotate(q, w.rope), rotate(k, w.rope)  # [h, n, d_k], [kv, n, d_k]
    config = AttentionConfig(mode="direct", d_v=v.shape[-1], **shared)
    return config, AttentionInputs(Q=q, K=k, V=v, W_O=lw.W_O, b_O=lw.b_O)
