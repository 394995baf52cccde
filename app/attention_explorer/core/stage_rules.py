"""The rules the stage catalogue names, for a given computation (Qt-free).

:mod:`attention_explorer.core.stages` says, per stage, *which* rule decides when it is shown, which
caption rule writes its arrow caption and which settings are upstream of it. This module
implements those rules, keyed by rule name (never by stage name), so the stage panel, the
exports and the banner ask here instead of keeping lists of their own:

* :data:`SHOWN`: rule -> (test on a trace, why a trace lacks it);
* :data:`CAPTIONS`: rule -> the caption of a stage for a config;
* :data:`SETTINGS`: setting -> its words under an exported picture.

A trace here is anything with ``config``, ``has(name)`` and ``scale`` (an engine Trace).
"""

from __future__ import annotations

from collections.abc import Callable

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stages import CATALOGUE, panel_stages, stage


def _projected(trace) -> bool:
    return trace.config.mode == "projection"


def _positions(trace) -> bool:
    return trace.config.added_positions


def _rotary(trace) -> bool:
    return trace.config.positional == "rope"


def _qk_norm(trace) -> bool:
    return trace.config.qk_norm != "none"


def _softcap(trace) -> bool:
    return trace.config.softcap is not None


def _sinks(trace) -> bool:
    return bool(getattr(trace.config, "attention_sinks", False))


def _output(trace) -> bool:
    return trace.has("output")


def _combined(trace) -> bool:
    # several heads; with one head the concatenation is shown only beside a W_O
    return trace.config.heads > 1 or _output(trace)


#: rule -> (True when the computation has the stage, why it lacks it otherwise).
SHOWN: dict[str, tuple[Callable[[object], bool], str]] = {
    "always": (lambda trace: True, "every computation has it"),
    "projection": (_projected, "it exists only in projection mode (typed Q, K, V have no X)"),
    "positions": (
        _positions,
        "it exists only with a sinusoidal or learned encoding added to X, in projection mode",
    ),
    "rotary": (_rotary, "it exists only with rotary positions (RoPE) on"),
    "qk_norm": (_qk_norm, "it exists only with QK-norm on (an RMSNorm on each head's q and k)"),
    "softcap": (_softcap, "it exists only with a soft cap on the scores (softcap)"),
    "sinks": (_sinks, "it exists only with attention sinks on (a sink logit per head)"),
    "cross": (
        lambda trace: _projected(trace) and trace.config.attention == "cross",
        "it exists only in cross-attention, in projection mode",
    ),
    "combined": (_combined, "one head without an output projection has nothing to combine"),
    "output": (_output, "the session has no output projection W_O"),
}


def is_shown(name: str, trace) -> bool:
    """True when the stage panel shows stage ``name`` for ``trace`` (its rule holds; a stage
    the pass left out for speed is shown with a placeholder that says why)."""
    return SHOWN[stage(name).when][0](trace)


def hidden_stages(trace) -> tuple[str, ...]:
    """The panel's stages that ``trace``'s computation does not show, in pipeline order."""
    return tuple(name for name in panel_stages() if not is_shown(name, trace))


def why_missing(name: str, trace) -> str:
    """Why ``trace`` lacks stage ``name``, in a few words (for a refusal)."""
    test, why = SHOWN[stage(name).when]
    if not test(trace):
        return why
    computed = ", ".join(s for s in CATALOGUE if trace.has(s))
    return f"computed stages: {computed}"


def _projection_caption(name: str, config, trace) -> str:
    return f"X · W_{name}" if config.mode == "projection" else f"{name}\n(typed)"


def _scale_caption(name: str, config, trace) -> str:
    if config.scale == "sqrt_dk":
        text = f"× 1/√{config.head_dim}"
    elif config.scale == "none":
        text = "× 1"
    else:
        text = f"× {format_number(trace.scale if trace is not None else config.scale_value(), 3)}"
    if config.temperature != 1:
        text += f"\n÷ T={format_number(config.temperature, 3)}"
    return text


def _mask_caption(name: str, config, trace) -> str:
    window = f", window {config.window}" if getattr(config, "window", None) else ""
    return f"mask\n({config.mask}{window})"


def _rotary_caption(name: str, config, trace) -> str:
    text = f"rotate by\nposition\n(θ={config.rope_theta:g})"
    if config.rotary_dims != config.head_dim:
        text += f"\ndims 0–{config.rotary_dims - 1} of {config.head_dim}"
    return text


def _qk_norm_caption(name: str, config, trace) -> str:
    factor = "(1 + w)" if config.qk_norm == "rms_one_plus" else "w"
    over = "per head" if config.qk_norm_width == "head" else "all heads"
    return f"RMS-norm\n× {factor}\n({over})"


def _softcap_caption(name: str, config, trace) -> str:
    cap = format_number(config.softcap, 3) if config.softcap is not None else "off"
    return f"cap·tanh(s/cap)\n(cap {cap})"


def _normalizer_caption(name: str, config, trace) -> str:
    per = "cell" if config.normalizer == "sigmoid" else "row"
    sink = "\n+ the sink" if getattr(config, "attention_sinks", False) else ""
    return f"{config.normalizer}\nper {per}{sink}"


def _sinks_caption(name: str, config, trace) -> str:
    sinks = getattr(getattr(trace, "inputs", None), "sinks", None)
    if sinks is None or not len(sinks):
        return "sink logit\nin the softmax"
    low, high = (format_number(float(f(sinks)), 3) for f in (min, max))
    return f"sink logit\nin the softmax\n({low if low == high else f'{low}…{high}'})"


#: rule -> caption of stage ``name`` for ``config`` (``trace`` may be None).
CAPTIONS: dict[str, Callable[[str, object, object], str]] = {
    "projection": _projection_caption,
    "scale": _scale_caption,
    "mask": _mask_caption,
    "normalizer": _normalizer_caption,
    "rotary": _rotary_caption,
    "qk_norm": _qk_norm_caption,
    "softcap": _softcap_caption,
    "sinks": _sinks_caption,
}


def caption(name: str, trace=None, config=None) -> str:
    """The arrow caption of stage ``name``: the operation that makes it from the view before
    ("× 1/√4" for the scaled scores of d_k = 4); the catalogue's plain caption without a
    config."""
    entry = stage(name)
    config = trace.config if trace is not None else config
    if config is None or not entry.caption_rule:
        return entry.caption
    return CAPTIONS[entry.caption_rule](name, config, trace)


def _rope_words(trace) -> list[str]:
    config = trace.config
    words = [f"RoPE θ {config.rope_theta:g}"]
    if config.rope_scaling != "default":
        words.append(f"{config.rope_scaling} scaling × {config.rope_factor:g}")
    if config.position_offset:
        words.append(f"positions from {config.position_offset}")
    if config.rotary_dims != config.head_dim:
        words.append(f"rotates {config.rotary_dims} of {config.head_dim} dims")
    return words


def _qk_norm_words(trace) -> list[str]:
    config = trace.config
    if config.qk_norm == "none":
        return []
    factor = "1 + w" if config.qk_norm == "rms_one_plus" else "w"
    over = "each head" if config.qk_norm_width == "head" else "all heads"
    return [f"QK-norm × {factor} over {over}, eps {config.qk_norm_eps:g}"]


def _mask_words(trace) -> list[str]:
    config = trace.config
    words = [f"{config.mask} mask" if config.mask != "none" else "no mask"]
    if config.window is not None:
        words.append(f"window {config.window}")
    return words


def _scale_words(trace) -> list[str]:
    words = [f"scale {trace.scale:.4g}"]
    if trace.config.temperature != 1.0:
        words.append(f"temperature {trace.config.temperature:g}")
    return words


#: setting -> its words under an exported picture of a stage downstream of it.
SETTINGS: dict[str, Callable[[object], list[str]]] = {
    "scale": _scale_words,
    "mask": _mask_words,
    "softcap": lambda t: [] if t.config.softcap is None else [f"soft cap {t.config.softcap:g}"],
    "qk_norm": _qk_norm_words,
    "normalizer": lambda t: [t.config.normalizer],
    "rope": _rope_words,
    "heads": lambda t: [f"{t.config.heads} heads × d_v {t.config.value_dim}"],
    "sinks": lambda t: ["a sink logit per head"] if _sinks(t) else [],
}


def upstream_words(name: str, trace) -> list[str]:
    """The settings upstream of stage ``name``, in words ("scale 0.5", "causal mask")."""
    return [word for setting in stage(name).upstream for word in SETTINGS[setting](trace)]


def unknown_rules() -> list[str]:
    """Rule names the catalogue uses that this module does not implement (should be none)."""
    missing = []
    for name, entry in CATALOGUE.items():
        if entry.when not in SHOWN:
            missing.append(f"{name}.when={entry.when}")
        if entry.caption_rule and entry.caption_rule not in CAPTIONS:
            missing.append(f"{name}.caption_rule={entry.caption_rule}")
        missing += [f"{name}.upstream={s}" for s in entry.upstream if s not in SETTINGS]
    return missing
