"""Building blocks of the worked examples: the session document, number formatting for the
notes, and the engine's float64 trace of a document (what the app will show)."""

from __future__ import annotations

import json

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.file_format import FORMAT_NAME, FORMAT_VERSION, loads_session

TUTORIAL = "Tutorial examples"
WHY_SCALE = "Why scale"
MASKS = "Masks"
CHECKPOINTS = "Checkpoint experiments"

# The tutorials the examples come from, by title (the first line of each tutorial's text).
FIRST_PRINCIPLES = (
    "How Transformers Think: Self-Attention and Multi-Head Attention from First Principles"
)
HEART = "Attention Mechanism: The Heart of Transformers"
EXPLAINED = "Self-attention mechanism explained"
ATTENTION_101 = "Attention 101 : Self-Attention, Multi-Head & Single-Head Attention"


def cite(tutorial: str, section: str) -> str:
    """Where an example comes from, as a reader finds it: the tutorial's title and section."""
    return f"“{tutorial}”, {section}"


# -- helpers ----------------------------------------------------------------------------------
def num(x: float, places: int = 4) -> str:
    """One number as the notes print it (the app's formatter; tiny values stay exact, not ≈0)."""
    x = float(x)
    if x != 0 and abs(x) < 10**-places:
        return f"{x:.{places - 1}e}"
    return format_number(x, places)


def vec(values, places: int = 4) -> str:
    """A vector as ``[a, b, c]``."""
    return "[" + ", ".join(num(v, places) for v in np.ravel(values)) + "]"


def f32(array) -> list:
    """A float32 array as nested lists of the shortest decimals that round-trip to float32."""
    a = np.asarray(array, dtype=np.float32)
    if a.ndim == 0:
        return float(str(a))
    return [f32(row) for row in a]


def f64(array) -> list:
    """A float64 array as nested lists (exact, shortest repr)."""
    return np.asarray(array, dtype=np.float64).tolist()


def projection(digits, X, W_Q, W_K, W_V, W_O=None) -> dict:
    """The ``inputs`` of a projection session, each matrix written by ``digits`` (f32 or f64)."""
    inputs = {"mode": "projection", "X": digits(X), "W_Q": digits(W_Q), "W_K": digits(W_K)}
    inputs["W_V"] = digits(W_V)
    if W_O is not None:
        inputs["W_O"] = digits(W_O)
    return inputs


def doc(
    key: str,
    *,
    title: str,
    group: str,
    order: int,
    description: str,
    tokens: list[str],
    config: dict,
    inputs: dict,
    kv_tokens: list[str] | None = None,
    question: str = "",
    expect: str = "",
    try_: dict | None = None,
    source: str = "",
    focus: tuple[int, int] | None = None,
) -> dict:
    """A session document (the file format's JSON object) with the example's menu data."""
    experiment: dict = {"group": group, "order": order}
    if source:
        experiment["source"] = source
    if question:
        experiment["question"] = question
    if expect:
        experiment["expect"] = expect
    if try_:
        experiment["try"] = try_
    if focus is not None:
        experiment["focus"] = {"row": focus[0], "col": focus[1]}
    out = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "name": title,
        "description": description,
        "tokens": tokens,
    }
    if kv_tokens is not None:
        out["kv_tokens"] = kv_tokens
    out.update({"config": config, "inputs": inputs, "notes": [], "experiment": experiment})
    out["_key"] = key
    return out


def trace_of(d: dict, **config_changes):
    """The float64 trace of a document (optionally with some settings changed)."""
    body = {k: v for k, v in d.items() if k != "_key"}
    data = loads_session(json.dumps(body))
    if config_changes:
        data = data.with_changes(config=data.config.with_changes(**config_changes))
    return compute_session(data, dtype="float64")


def note(d: dict, title: str, text: str) -> None:
    """Append a note to a document."""
    d["notes"].append({"title": title, "text": text})
