"""The worked examples of the KV cache (issue 30 item 6), every number computed here.

"Why does the model keep the first token?" (:func:`sink_document`, here): the shipped
``tiny-induction`` continues a list it has read once (:data:`PROMPT`) with the full cache and
under cache policies (:data:`POLICIES`). It measures that this small model has no attention
sink and shows what the first tokens are kept for here: what they say.

"What does latent attention store?" (:func:`latent_document`, in :mod:`.worked_latent` and
importable here): DeepSeek-V3's published shape priced by :mod:`.cache_size` against
multi-head and grouped-query attention of the same width, on a toy session whose keys and
values are up-projections of a 3-number latent per token.

The ``*_measures`` functions compute the numbers and ``*_notes`` write them, so a note cannot
disagree with ``ae.generate`` or ``ae.cache_size``; ``tools/make_examples.py`` writes the
documents into ``resources/examples``.
"""

from __future__ import annotations

import json

import numpy as np

from .cache_size import CacheShape, bytes_per_token
from .loop import generate
from .worked_latent import GROUP, latent_document  # noqa: F401 (tools/make_examples.py)

MODEL = "tiny-induction"
RUN = "lion bear wolf frog duck goat swan crab".split()
PROMPT = " ".join(RUN + RUN[:2])  # the list once, then its first two words again
STEPS = 6
LAYER = 1  # the induction head's layer
SINK_KEY = "kv-cache-first-token"
WINDOW = 4  # the short window of the policies and of the session's one-click experiment
#: The policies compared, by the name the notes give them.
POLICIES = {
    "full": None,
    "window": {"window": WINDOW},
    "one sink": {"sinks": 1, "window": WINDOW},
    "four first": {"sinks": 4, "window": WINDOW},
    "list kept": {"sinks": 8, "window": 2},
}


def _run(policy) -> dict:
    """One greedy generation of :data:`PROMPT` in float64 under ``policy``: the generated
    tokens, each step's probability of its token, layer ``LAYER``'s first row and the bytes
    the cache holds at the end."""
    out = generate(MODEL, PROMPT, STEPS, cache_policy=policy, dtype="float64")
    return {
        "tokens": list(out.tokens[out.prompt_length :]),
        "probs": [s.probability for s in out.steps],
        "first_row": out.steps[0].attentions[LAYER, 0].tolist(),  # [keys] the induction head
        "sink_weights": [s.attentions[:, 0, 0].tolist() for s in out.steps],  # [steps][layers]
        "positions": [s.position for s in out.steps],
        "cache_bytes": out.cache_bytes,
        "held": len(out.cache[0].positions),
    }


def _smallest_window(full: list[str], sinks: int) -> int:
    """The smallest window (with ``sinks`` first positions kept) whose text equals ``full``."""
    for window in range(1, len(PROMPT.split()) + STEPS):
        policy = {"window": window} | ({"sinks": sinks} if sinks else {})
        out = generate(MODEL, PROMPT, STEPS, cache_policy=policy, dtype="float64")
        if out.tokens[-STEPS:] == tuple(full):
            return window
    return len(PROMPT.split()) + STEPS


def sink_measures() -> dict:
    """Every number of the first-token example: each policy's run, the smallest windows that
    keep the full text (with no sink and with one), and the cache's bytes per position."""
    from attention_explorer.pretrained.open_model import load_model

    runs = {name: _run(policy) for name, policy in POLICIES.items()}
    full = runs["full"]["tokens"]
    size = bytes_per_token(CacheShape.of_model(load_model(MODEL)), "float64")
    return {
        "prompt": PROMPT.split(),
        "runs": runs,
        "smallest": _smallest_window(full, 0),
        "smallest_one_sink": _smallest_window(full, 1),
        "per_position": size.all_layers,
    }


def _policy(name: str) -> str:
    """Policy ``name`` as the cache_policy argument reads."""
    return json.dumps(POLICIES[name])


def _percent(value: float) -> str:
    """A weight as a percentage with two decimals."""
    return f"{value:.2%}"


def _text(tokens: list[str]) -> str:
    return "“" + " ".join(tokens) + "”"


def _probs(run: dict) -> str:
    return ", ".join(f"{p:.4f}" for p in run["probs"])


def sink_notes(m: dict) -> list[dict]:
    """The first-token example's notes, every number from ``m`` (:func:`sink_measures`)."""
    runs, words = m["runs"], m["prompt"]
    full, window, one, four, kept = (runs[k] for k in POLICIES)
    sinks = np.array(full["sink_weights"])  # [steps, layers]
    uniform = [1 / (p + 1) for p in full["positions"]]
    query = len(words) - 1  # the last prompt token, whose row predicts the first new token
    source = words.index(RUN[1]) + 1  # the word after the list's first "bear": what it copies
    first = POLICIES["four first"]["sinks"]
    return [
        {
            "title": "Is the first token a sink in tiny-induction?",
            "text": f"With the full cache, over the {STEPS} steps after {_text(words)}, "
            f"position 0 (“{words[0]}”) takes at most {_percent(sinks[:, 0].max())} of layer "
            f"0's weight and {_percent(sinks[:, 1].max())} of layer 1's; a uniform row would "
            f"give it {_percent(min(uniform))} to {_percent(max(uniform))}. Large language "
            "models put a large share of many heads' weight on their first tokens "
            "(StreamingLLM's attention sinks), so evicting those breaks them. tiny-induction, "
            "trained on short lists, learned no sink: this example measures what its first "
            "tokens are kept for instead.",
        },
        {
            "title": "The full cache copies the list",
            "text": f"Greedy, float64: {_text(full['tokens'])}, the list's continuation, with "
            f"probabilities {_probs(full)}. The induction head (layer 1) of the query "
            f"“{words[query]}” (position {query}) puts {_percent(full['first_row'][source])} "
            f"of its weight on “{words[source]}” (position {source}), the word after the "
            f"list's first “{RUN[1]}”. At the end the cache holds {full['held']} positions, "
            f"{full['cache_bytes']:,} bytes ({m['per_position']:,} a position).",
        },
        {
            "title": f"A window of {WINDOW} forgets the list",
            "text": f"{_policy('window')}: {_text(window['tokens'])}, probabilities "
            f"{_probs(window)}. Position {source} is out of the window, so the induction "
            f"head copies from what the window still holds and the text loops. The cache holds "
            f"{window['held']} positions, {window['cache_bytes']:,} bytes. The smallest "
            f"window that keeps the full text is {m['smallest']}.",
        },
        {
            "title": "Keeping the first token does not save it",
            "text": f"{_policy('one sink')} (StreamingLLM's rule with one sink): "
            f"{_text(one['tokens'])}, probabilities {_probs(one)}: the same text as the "
            f"window alone. The induction head's weight on “{words[0]}” at the first step "
            f"rises from {_percent(full['first_row'][0])} to {_percent(one['first_row'][0])}: "
            "when what a head looks for is evicted, its softmax still puts the weight "
            "somewhere, on what is left (in a model with a sink, evicting the sink sends "
            "its large share to the recent tokens). With one sink the smallest window that "
            f"keeps the full text is still {m['smallest_one_sink']}.",
        },
        {
            "title": "Keep the first tokens that hold the list, and a short window suffices",
            "text": f"{_policy('four first')}: {_text(four['tokens'])}: it copies the list's "
            f"words the first {first} positions still hold (“{words[first - 2]}”, "
            f"“{words[first - 1]}”), then, “{words[first]}” being evicted, loops. "
            f"{_policy('list kept')}: {_text(kept['tokens'])}, probabilities "
            f"{_probs(kept)}, the full cache's text, holding {kept['held']} positions "
            f"({kept['cache_bytes']:,} bytes) instead of {full['held']}. In this model the "
            "first tokens are worth keeping for what they say (the list it copies), not as "
            "a sink.",
        },
    ]


def _compact(value):
    """Nested lists of floats written with 7 significant digits."""
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return float(f"{value:.7g}")


def windowed_row(doc: dict) -> list[float]:
    """The last word's row of the session ``doc`` (head 0) with the engine's sliding window
    of :data:`WINDOW` on this layer: the session's one-click experiment, in float64."""
    from attention_explorer.session.compute_session import compute_session
    from attention_explorer.session.file_format import loads_session

    data = loads_session(json.dumps({k: v for k, v in doc.items() if k != "_key"}))
    data = data.with_changes(config=data.config.with_changes(window=WINDOW))
    return compute_session(data, dtype="float64").stage("weights", 0)[-1].tolist()  # [n]


def sink_document() -> dict:
    """The first-token example as a session-file dict: layer 1 of tiny-induction on the
    prompt (the induction head's row of the last word is the first step's), with the notes."""
    from attention_explorer.pretrained.open_model import from_model
    from attention_explorer.session.file_format import session_to_dict

    m = sink_measures()
    doc = session_to_dict(from_model(MODEL, PROMPT, layer=LAYER))
    doc["inputs"] = {k: _compact(v) if isinstance(v, list) else v for k, v in doc["inputs"].items()}
    words = m["prompt"]
    source = words.index(RUN[1]) + 1
    row = windowed_row(doc)  # [n] the last word's row under the one-click window
    top = int(np.argmax(row))
    doc.update(
        name="Why does the model keep the first token?",
        description=(
            "tiny-induction continues a list it has read once, with the full KV cache, a "
            "short window, a window plus the first token (StreamingLLM's sink) and a window "
            f"plus the first tokens that hold the list. This is layer {LAYER} of tiny-induction "
            "on the prompt; the notes give what ae.generate writes under each cache policy."
        ),
        notes=sink_notes(m),
        experiment={
            "group": GROUP,
            "order": 950,
            "question": "What does evicting the first tokens do to the text, and why?",
            "expect": f"The induction head's row for the last “{RUN[1]}” puts "
            f"{_percent(m['runs']['full']['first_row'][source])} of its weight on "
            f"“{words[source]}” (position {source}). The one-click experiment gives this layer "
            f'a window of {WINDOW}, as the policy {{"window": {WINDOW}}} does at the first '
            f"step (X, layer 0's output, stays as the full cache made it): “{words[source]}” "
            f"gets exactly {row[source]:g} and the row's largest weight, {_percent(row[top])}, "
            f"goes to “{words[top]}” (position {top}).",
            "try": {"window": WINDOW},
            "focus": {"row": len(words) - 1, "col": source},
            "model": {"name": MODEL, "text": PROMPT, "layer": LAYER},
        },
    )
    return {"_key": SINK_KEY, **doc}
