"""The worked example "Which head carries the copy? Patching tiny-induction" (issue 29.4).

The shipped ``tiny-induction`` (a 2-layer GPT-2, one head a layer: a previous-token head in
layer 0, an induction head in layer 1) reads a list of words that repeats, cut just before
its last word (:data:`CLEAN`: after the second "swan" it should copy "crab"), and the same
list with its first half shuffled (:data:`CORRUPTED`: there "swan" was followed by "bear",
so it copies "bear"). Both prompts have 18 tokens and differ only in the first half.
Patching each site from the clean run into the corrupted run, with the metric
``logit[crab] − logit[bear]`` at the last position, says which head carries the copy (the
induction head's output restores all of it) and through which positions (the key after the
first "swan", and the position where the corrupted list had "bear"); patching the induction
head's weights alone restores much less, which the attention map by itself cannot tell.

:func:`measures` computes every number the notes quote with :mod:`attention_explorer.causal`
in float64, so the notes cannot disagree with what the patching view shows; :func:`document`
is the example as a session-file dict (layer 1 of the model on the clean prompt, opening on
the induction head's row for the last "swan"), which ``tools/make_examples.py`` writes into
``resources/examples/tiny-induction-patching.json``. :data:`REQUEST` is the patching the
window's "Why?" views open the example with.
"""

from __future__ import annotations

from attention_explorer.causal.attribution import head_attribution
from attention_explorer.causal.patching import SITES, patch

MODEL = "tiny-induction"
PREFIX = "owl hen pig".split()
RUN = "lion bear wolf frog duck goat swan crab".split()
SHUFFLED = "goat crab lion swan bear duck frog wolf".split()
CLEAN = " ".join(PREFIX + RUN + RUN[:-1])
CORRUPTED = " ".join(PREFIX + SHUFFLED + RUN[:-1])
ANSWER, WRONG = "crab", "bear"
LAYER = 1  # the induction head's layer
KEY = "tiny-induction-patching"
#: The patching the example asks for (``ae.patch(MODEL, **REQUEST, site=...)``).
REQUEST = {"clean": CLEAN, "corrupted": CORRUPTED, "answer": ANSWER, "wrong": WRONG}


def measures() -> dict:
    """Every number the notes quote, computed now in float64: the metric on both prompts,
    each site's map (``maps[site]`` as nested lists), the head attribution and the tokens."""
    maps, result = {}, None
    for site in SITES:
        result = patch(MODEL, site=site, dtype="float64", **REQUEST)
        maps[site] = result.values.tolist()
    attribution = head_attribution(MODEL, CLEAN, ANSWER, WRONG, dtype="float64")
    return {
        "clean": result.clean_metric,
        "corrupted": result.corrupted_metric,
        "maps": maps,
        "attribution": attribution.values.tolist(),
        "attribution_total": attribution.total,
        "tokens": list(result.tokens),
        "corrupted_tokens": list(result.corrupted_tokens),
    }


def _best(rows: list[list[float]], layer: int) -> tuple[int, float]:
    """The position (or head) of a map's layer with the largest value, and the value."""
    values = rows[layer]
    index = max(range(len(values)), key=lambda i: values[i])
    return index, values[index]


def _percent(value: float) -> str:
    """A share as a whole percentage, or with two decimals when it rounds to 0%."""
    return f"{value:.0%}" if abs(value) >= 0.005 else f"{value:.2%}"


def notes(m: dict) -> list[dict]:
    """The example's notes, every number from ``m`` (:func:`measures`)."""
    tokens, corrupted, maps = m["tokens"], m["corrupted_tokens"], m["maps"]
    last = len(tokens) - 1
    key_at = tokens.index(ANSWER)  # the clean "crab" after the first "swan"
    wrong_at = corrupted.index(WRONG)  # where the corrupted list had "bear" after "swan"
    head_out, pattern = maps["head_out"], maps["pattern"]
    resid = maps["resid_pre"][LAYER]
    attn_last = maps["attn_out"][LAYER][last]
    others = max(abs(v) for i, v in enumerate(maps["attn_out"][LAYER]) if i != last)
    layer0, layer0_value = _best(maps["attn_out"], 0)
    resid_others = max(abs(v) for i, v in enumerate(resid) if i not in (key_at, wrong_at))
    return [
        {
            "title": "Two prompts, one difference",
            "text": f"Clean: “{CLEAN}”. Corrupted: the same {len(tokens)} words with the first "
            f"run shuffled, “{CORRUPTED}”. After the last “swan” the model copies what came "
            f"after the first “swan”: “{ANSWER}” in the clean prompt, “{WRONG}” in the "
            f"corrupted one. The metric logit[{ANSWER}] − logit[{WRONG}] at the last position "
            f"is {m['clean']:.2f} on the clean prompt and {m['corrupted']:.2f} on the "
            "corrupted one; a patch scores the share of that gap it closes (1 = all of it).",
        },
        {
            "title": "Which head carries the copy",
            "text": f"Patching one head's output (head_out) from the clean run: layer 1's head "
            f"restores {_percent(head_out[1][0])}, layer 0's {_percent(head_out[0][0])}. "
            f"Patching layer 1's attention output at one position (attn_out): at the last "
            f"position (“{tokens[last]}”, {last}) {_percent(attn_last)}, at every other "
            f"position at most {_percent(others)}. The copy travels through the induction "
            f"head, at the position that predicts. Layer 0's output matters most at position "
            f"{layer0} (clean “{tokens[layer0]}”, corrupted “{corrupted[layer0]}”): "
            f"{_percent(layer0_value)}.",
        },
        {
            "title": "Through which positions",
            "text": f"Patching the residual entering layer 1 (resid_pre) at position {key_at} "
            f"(“{tokens[key_at]}”, which the clean list had after “swan”) restores "
            f"{_percent(resid[key_at])}: it gives the induction head a key saying “the word "
            f"before me was swan” and the value “{ANSWER}”. At position {wrong_at} (where the "
            f"corrupted list had “{WRONG}” after “swan”) it restores "
            f"{_percent(resid[wrong_at])}: the corrupted run loses the key it was copying "
            f"from. Every other position: at most {_percent(resid_others)}.",
        },
        {
            "title": "What the attention map does not settle",
            "text": "The induction head's map shows where it looks: on the clean prompt, at "
            f"position {key_at}. Patching only its weights (pattern) into the corrupted run "
            f"restores {_percent(pattern[1][0])}: looking at position {key_at} there reads "
            f"“{corrupted[key_at]}”, not “{ANSWER}”; what the head reads matters as much as "
            f"where it looks. Direct attribution gives the induction head "
            f"{m['attribution'][1][0]:+.2f} of the {m['attribution_total']:.2f} logit "
            f"difference and the previous-token head {m['attribution'][0][0]:+.2f}: layer "
            f"0's head matters ({_percent(head_out[0][0])} by patching) only through the "
            "key it writes for layer 1, which no direct effect can show.",
        },
    ]


def document() -> dict:
    """The example as a session-file dict: layer 1 of tiny-induction on the clean prompt
    (X and the model's own weights, 7 significant digits), with :func:`notes`."""
    from attention_explorer.pretrained.open_model import from_model
    from attention_explorer.session.file_format import session_to_dict

    m = measures()
    doc = session_to_dict(from_model(MODEL, CLEAN, layer=LAYER))
    doc["inputs"] = {k: _compact(v) if isinstance(v, list) else v for k, v in doc["inputs"].items()}
    last = len(m["tokens"]) - 1
    doc.update(
        name="Which head carries the copy? Patching tiny-induction",
        description=(
            "Activation patching between a repeated list and the same list with its first "
            "half shuffled shows which head carries the copy and through which positions. "
            f"This is layer {LAYER} of tiny-induction on the clean list; the notes give what "
            "patching finds (ae.patch, attention-explorer patch, or Model > Why?)."
        ),
        notes=notes(m),
        experiment={
            "group": "Real models",
            "order": 920,
            "question": "Which head carries the copy, and does where it looks say why?",
            "expect": f"The induction head's row for the last “swan” puts its weight on "
            f"“{ANSWER}”; patching its output restores the whole answer, its weights alone "
            f"{_percent(m['maps']['pattern'][1][0])}.",
            "focus": {"row": last, "col": m["tokens"].index(ANSWER)},
            "model": {"name": MODEL, "text": CLEAN, "layer": LAYER},
        },
    )
    return {"_key": KEY, **doc}


def _compact(value):
    """Nested lists of floats written with 7 significant digits."""
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return float(f"{value:.7g}")
