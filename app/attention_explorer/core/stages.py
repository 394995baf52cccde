"""The stage catalogue: the ONE place that says what each stage is and how it reads.

``X`` is the input as typed; with positional encoding on, ``positions`` is P and ``X_pos`` is
X + P, the matrix the projections read (both absent when positions are off). With QK-norm,
``Q_normed`` and ``K_normed`` are each head's q and k RMS-normalised with their own weights;
with RoPE, ``Q_rot`` and ``K_rot`` are Q (or the normed Q) and K turned by position: what the
scores read. With a soft cap, ``capped`` is cap · tanh(scaled / cap), what the mask reads.

The window's views, the exports, the walkthrough and the command line's help all read this
module; none of them keeps its own list of titles, colour levels, shrink rules or number
formats. Qt-free (colour maps are named, not drawn: looked up by whoever draws).

Value kinds (``signed``, ``unit``, ``free``) decide colour levels; what each means and the
colour maps and masked cell they draw with are in :mod:`attention_explorer.core.stage_colours`.

Shrink rules (a long sequence shown at display resolution): ``max`` keeps a single peak
visible (weights, mask); ``mean`` averages blocks (everything else).

Where a stage appears and how it is described is data here too: its panel ``group`` (the
foldable ``inputs``, the ``attention`` core, the ``combine`` step; None: no view of its own),
the rule that says ``when`` it is shown, its arrow ``caption`` (and the ``caption_rule`` that
fills in a config's numbers), the settings ``upstream`` of it, the ``explain`` builder that
writes out one cell's arithmetic, other names (``aliases``), a ``short`` name and whether the
experiment banner ``compared`` its row. The named rules and captions are implemented in
:mod:`attention_explorer.core.stage_rules` (they read a config); this module stays plain data.
The :class:`Stage` record itself is :mod:`attention_explorer.core.stage_record`'s.
"""

from __future__ import annotations

# DEFAULT_DIVERGING and MASKED_RGB stay importable here for ui/heatmap/heatmap_view.py and
# ui/model/latent_view.py; new code imports the colours from core.stage_colours.
from attention_explorer.core.stage_colours import DEFAULT_DIVERGING, MASKED_RGB  # noqa: F401
from attention_explorer.core.stage_record import Stage

# The axes of a stage's matrix, (rows, columns): what a row and a column stand for.
_TOKEN_DIMS = ("tokens", "dimension")  # the inputs: a row per token, before any query
_QUERY_DIMS = ("queries", "dimension")
_KEY_DIMS = ("keys", "dimension")
_QUERY_KEYS = ("queries", "keys")
_QUERY_OUTPUTS = ("queries", "output dimension")


def _shared(name, title, formula, axes, kind, shrink="mean", **more) -> Stage:
    """A stage with one matrix for all heads."""
    return Stage(name, title, formula, False, *axes, kind, shrink, **more)


def _per_head(name, title, formula, axes, kind, shrink="mean", **more) -> Stage:
    """A stage with one matrix per head."""
    return Stage(name, title, formula, True, *axes, kind, shrink, **more)


#: The settings upstream of each step of the attention core (cumulative, in order).
_SCALED = ("scale",)
_CAPPED = ("scale", "softcap")
_MASKED = ("scale", "softcap", "mask")
_WEIGHTED = ("scale", "softcap", "mask", "normalizer")

#: Every stage, in pipeline order.
CATALOGUE: dict[str, Stage] = {
    s.name: s
    for s in (
        _shared(
            "X",
            "input X",
            "the token embeddings",
            _TOKEN_DIMS,
            "free",
            group="inputs",
            when="projection",
            caption="input",
            explain="typed",
        ),
        _shared(
            "positions",
            "positional encoding P",
            "P[i] for position i (sinusoidal or learned)",
            _TOKEN_DIMS,
            "signed",
            group="inputs",
            when="positions",
            caption="position\nencoding",
            short="P",
        ),
        _shared(
            "X_pos",
            "input with positions X + P",
            "X + P: what W_Q, W_K, W_V project",
            _TOKEN_DIMS,
            "free",
            group="inputs",
            when="positions",
            caption="X + P",
            short="X + P",
        ),
        _shared(
            "X_kv",
            "key/value input X_kv",
            "embeddings of the key/value sequence",
            _KEY_DIMS,
            "free",
            group=None,
            when="cross",
            caption="key/value\ninput",
            explain="typed",
        ),
        *(
            _per_head(
                name,
                title,
                f"{name} = X W_{name} (+ b_{name})",
                axes,
                "free",
                group="inputs",
                caption=f"X · W_{name}",
                caption_rule="projection",
                explain="projection",
            )
            for name, title, axes in (
                ("Q", "queries Q", _QUERY_DIMS),
                ("K", "keys K", _KEY_DIMS),
                ("V", "values V", _KEY_DIMS),
            )
        ),
        *(
            _per_head(
                f"{name}_normed",
                f"{title} after QK-norm",
                f"{name} / rms({name}) × w: each head's {name.lower()} RMS-normalised (QK-norm)",
                axes,
                "free",
                group="inputs",
                when="qk_norm",
                caption="RMS-norm\n× w",
                caption_rule="qk_norm",
                upstream=("qk_norm",),
                explain="qk_norm",
                aliases=(f"{name.lower()}_normed", f"normed_{name.lower()}"),
                short=f"{name}̂",
            )
            for name, title, axes in (
                ("Q", "queries Q", _QUERY_DIMS),
                ("K", "keys K", _KEY_DIMS),
            )
        ),
        *(
            _per_head(
                f"{name}_rot",
                f"{title} after rotation",
                f"{name} turned pair by pair by position × frequency (RoPE)",
                axes,
                "free",
                group="inputs",
                when="rotary",
                caption="rotate by\nposition",
                caption_rule="rotary",
                upstream=("rope",),
                explain="rotary",
                aliases=(f"{name.lower()}_rotated", f"rotated_{name.lower()}"),
                short=f"{name}′",
            )
            for name, title, axes in (
                ("Q", "queries Q", _QUERY_DIMS),
                ("K", "keys K", _KEY_DIMS),
            )
        ),
        _per_head(
            "scores",
            "QKᵀ scores",
            "q_i · k_j",
            _QUERY_KEYS,
            "signed",
            caption="Q·Kᵀ",
            explain="scores",
            compared=True,
        ),
        _per_head(
            "scaled",
            "scaled scores",
            "q_i · k_j × scale ÷ temperature",
            _QUERY_KEYS,
            "signed",
            caption="× 1/√d_k",
            caption_rule="scale",
            upstream=_SCALED,
            explain="scaled",
            compared=True,
        ),
        _per_head(
            "capped",
            "soft-capped scores",
            "cap · tanh(scaled / cap): no score beyond ±cap (Gemma 2)",
            _QUERY_KEYS,
            "signed",
            when="softcap",
            caption="cap·tanh\n(s/cap)",
            caption_rule="softcap",
            upstream=_CAPPED,
            explain="softcap",
            aliases=("softcapped", "soft_capped"),
            compared=True,
        ),
        _shared(
            "mask",
            "mask",
            "1 = may attend, 0 = hidden",
            _QUERY_KEYS,
            "unit",
            "max",
            group=None,
            caption="mask",
            upstream=("mask",),
            explain="mask",
        ),
        _per_head(
            "masked",
            "masked scores",
            "scaled, or −∞ where the mask hides the key",
            _QUERY_KEYS,
            "signed",
            caption="mask",
            caption_rule="mask",
            upstream=_MASKED,
            explain="masked",
            compared=True,
        ),
        _per_head(
            "weights",
            "weights",
            "normaliser of each masked row",
            _QUERY_KEYS,
            "unit",
            "max",
            scalable=True,
            caption="softmax\nper row",
            caption_rule="normalizer",
            upstream=_WEIGHTED,
            explain="normalizer",
            aliases=("attention", "probabilities"),
            compared=True,
        ),
        _per_head(
            "sink_weight",
            "weight the sink takes",
            "exp(sink − M) / (Σ_j exp(masked_j − M) + exp(sink − M)): each row's weights sum "
            "to 1 − this (attention sinks, gpt-oss)",
            ("queries", "sink"),
            "unit",
            "max",
            when="sinks",
            caption="sink logit\nin the softmax",
            caption_rule="sinks",
            upstream=(*_WEIGHTED, "sinks"),
            explain="sink_weight",
            aliases=("sink", "sinks", "sink_weights"),
            short="sink",
        ),
        _per_head(
            "head_outputs",
            "head output A·V",
            "Σ_j weight_ij v_j",
            _QUERY_DIMS,
            "free",
            caption="· V",
            upstream=_WEIGHTED,
            explain="weighted_sum",
            aliases=("head_output", "heads_output"),
            compared=True,
        ),
        _shared(
            "concat",
            "concatenated heads",
            "[head_0 | head_1 | …]",
            _QUERY_DIMS,
            "free",
            group="combine",
            when="combined",
            caption="concat\nheads",
            upstream=(*_WEIGHTED, "heads"),
            explain="concat",
            head_blocks=True,
        ),
        _shared(
            "output",
            "output · W_O",
            "concat W_O (+ b_O)",
            _QUERY_OUTPUTS,
            "free",
            group="combine",
            when="output",
            caption="· W_O",
            upstream=_WEIGHTED,
            explain="output_projection",
            aliases=("W_O", "wo"),
            compared=True,
        ),
    )
}


#: The stage a panel keeps in view above all others: the attention weights.
FOCUS_STAGE = "weights"


def panel_stages(group: str | None = None) -> tuple[str, ...]:
    """The stages with a view of their own in the stage panel, in pipeline order (only those
    of ``group`` when given)."""
    return tuple(
        name
        for name, entry in CATALOGUE.items()
        if entry.group is not None and (group is None or entry.group == group)
    )


def combined_stages() -> tuple[str, ...]:
    """The stages that combine every head (the concatenation and the output projection): a
    pass limited to some heads cannot have them."""
    return panel_stages("combine")


def stage(name: str) -> Stage:
    """The catalogue entry of ``name``; KeyError naming the known stages otherwise."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise KeyError(f"unknown stage {name!r}; choose from {', '.join(CATALOGUE)}") from None


def title(name: str, normalizer: str | None = None) -> str:
    """The title of a stage; weights say their normaliser ("softmax weights")."""
    entry = stage(name)
    if name == "weights" and normalizer:
        return f"{normalizer} weights"
    return entry.title
