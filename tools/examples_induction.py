"""The worked example "How does a model copy? An induction head".

Layer 1 of the bundled ``tiny-induction`` decoder (tools/train_tiny_model.py) reading a text
whose second half repeats its first, as a projection session (X and the model's own W_Q, W_K,
W_V, W_O), opening on the induction head. The notes' numbers (the heads' scores, the accuracy
with every head and with each head knocked out) are computed here in float64 from the shipped
weights, so they always match the checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "resources" / "models" / "tiny-induction"
MODEL = "tiny-induction"
PREFIX = "owl hen pig"
RUN = "lion bear wolf frog duck goat swan crab"
TEXT = f"{PREFIX} {RUN} {RUN}"
LAYER = 1  # the induction head's layer; layer 0 holds the previous-token head
KEY = "tiny-induction-copy"


def _weights() -> tuple[dict, dict]:
    from safetensors.numpy import load_file

    config = json.loads((FOLDER / "config.json").read_text("utf-8"))
    stored = load_file(str(FOLDER / "model.safetensors"))
    tensors = {k.removeprefix("transformer."): v.astype(np.float64) for k, v in stored.items()}
    return config, tensors


def _norm(x: np.ndarray, t: dict, name: str, eps: float) -> np.ndarray:
    """LayerNorm over the last axis; x [n, d]."""
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * t[name + ".weight"] + t[name + ".bias"]


def _gelu_new(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def forward(ids: list[int], knockout: tuple[int, int] | None = None):
    """GPT-2 in float64: (logits [n, V], attention weights [layers, heads, n, n])."""
    config, t = _weights()
    heads, eps, n = config["n_head"], config["layer_norm_epsilon"], len(ids)
    h = t["wte.weight"][ids] + t["wpe.weight"][:n]  # [n, d]
    d_head = h.shape[1] // heads
    future = np.triu(np.ones((n, n), dtype=bool), 1)  # [n, n] causal mask
    weights = []
    for layer in range(config["n_layer"]):
        p = f"h.{layer}."
        qkv = _norm(h, t, p + "ln_1", eps) @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]
        q, k, v = (m.reshape(n, heads, d_head).transpose(1, 0, 2) for m in np.split(qkv, 3, -1))
        scores = np.where(future, -np.inf, q @ k.transpose(0, 2, 1) / np.sqrt(d_head))  # [H, n, n]
        a = np.exp(scores - scores.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        weights.append(a)
        z = a @ v  # [H, n, d_head]
        if knockout is not None and knockout[0] == layer:
            z[knockout[1]] = 0.0  # the head contributes nothing to concat · W_O
        concat = z.transpose(1, 0, 2).reshape(n, heads * d_head)  # [n, d]
        h = h + concat @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        inner = _gelu_new(
            _norm(h, t, p + "ln_2", eps) @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"]
        )
        h = h + inner @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]  # exactly 0 here
    logits = _norm(h, t, "ln_f", eps) @ t["wte.weight"].T  # [n, V]
    return logits, np.stack(weights)  # [layers, heads, n, n]


def _ids(words: list[str]) -> list[int]:
    vocab = json.loads((FOLDER / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
    return [vocab[w] for w in words]


def measures() -> dict:
    """The example's live numbers: copies right with every head and with each knocked out,
    and the two heads' scores on this text."""
    words = TEXT.split()
    ids = _ids(words)
    start, length = len(PREFIX.split()), len(RUN.split())
    rows = range(start + length, start + 2 * length - 1)  # the repeated half, last word aside
    logits, att = forward(ids)

    def right(lg):
        return sum(int(lg[r].argmax() == ids[r + 1]) for r in rows)

    return {
        "total": len(rows),
        "all": right(logits),
        "knock_induction": right(forward(ids, (1, 0))[0]),
        "knock_previous": right(forward(ids, (0, 0))[0]),
        "previous": float(np.mean([att[0, 0, i, i - 1] for i in range(1, len(ids))])),
        "induction": float(np.mean([att[1, 0, r, r - length + 1] for r in rows])),
        "rows": list(rows),
        "length": length,
    }


def _compact(value):
    """Nested lists of floats written with 7 significant digits."""
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return float(f"{value:.7g}")


def _notes(m: dict) -> list[dict]:
    words = TEXT.split()
    row = m["rows"][2]
    col = row - m["length"] + 1
    return [
        {
            "title": "The two-head circuit",
            "text": f"Layer 0's head is a previous-token head: each word puts on average "
            f"{m['previous']:.0%} of its weight on the word just before it, and writes "
            "“the word before me was …” into its position. This layer's head is an induction "
            f"head: from the second “{words[row]}” (row {row}) its query matches the key of "
            f"“{words[col]}” (column {col}), the word that came after the first "
            f"“{words[row]}”, because that key carries “the word before me was "
            f"{words[row]}”. Its value is then copied to the output: the model predicts "
            f"“{words[col]}”. Over the repeated half its weight on that key is "
            f"{m['induction']:.0%} on average. (Both heads were learned from random weights: "
            "layer 0 was held still for training's first 1000 steps, so this layer's head "
            "took the copying job first; once layer 0 could learn, it became the "
            "previous-token head and the two locked into this circuit within 250 steps.)",
        },
        {
            "title": "The model copies, and knockouts break it",
            "text": f"With every head, the model predicts {m['all']} of the {m['total']} "
            "predictable words of the repeated half (its top word). With the induction head "
            f"knocked out (its W_O rows zeroed) it gets {m['knock_induction']}; with the "
            f"previous-token head knocked out, {m['knock_previous']}. Training drew its runs "
            "of words at random, so this text is nothing it memorised: the model copies "
            "whatever run repeats.",
        },
    ]


def document() -> dict:
    """The example as a session-file dict (numbers to 7 significant digits)."""
    from attention_explorer.pretrained.open_model import from_model
    from attention_explorer.session.file_format import session_to_dict

    m = measures()
    session = from_model(FOLDER, TEXT, layer=LAYER)
    doc = session_to_dict(session)
    doc["inputs"] = {k: _compact(v) if isinstance(v, list) else v for k, v in doc["inputs"].items()}
    row = m["rows"][2]
    doc.update(
        name="How does a model copy? An induction head",
        description=(
            f"Layer {LAYER} of tiny-induction, a 2-layer GPT-2 shipped with the app and trained "
            "only on random words that repeat, reading a text whose second half repeats its "
            f"first. It predicts {m['all']} of the {m['total']} predictable repeated words. "
            "Follow a repeated word's row: the induction head looks at the word after its "
            "first occurrence. X and the weights are the model's own: edit any of them."
        ),
        notes=_notes(m),
        experiment={
            "group": "Real models",
            "order": 910,
            "question": "How does the model know which word comes next in the repeated half?",
            "expect": "The induction head's row for a repeated word puts most of its weight "
            "on the word right after that word's first occurrence.",
            "focus": {"row": row, "col": row - m["length"] + 1},
            "model": {"name": MODEL, "text": TEXT, "layer": LAYER},
        },
    )
    return {"_key": KEY, **doc}
