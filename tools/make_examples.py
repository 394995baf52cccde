"""Regenerate the worked examples in resources/examples/*.json, deterministically.

    .venv/bin/python tools/make_examples.py           write every example file
    .venv/bin/python tools/make_examples.py --check   exit 1 if a file on disk differs

Hand-typed numbers come from the tutorials in our curriculum; seeded numbers come from the
tutorials' own generators (torch.manual_seed(123), np.random.seed(0), np.random.seed(7)),
replayed in the tutorials' construction order so the random streams match. The app never
needs torch: every number is stored in the JSON. Exact values quoted in the notes are computed
here by the engine (float64), so a note can never disagree with what the app shows.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from attention_explorer.engine.explain import format_number
from attention_explorer.run import compute_session
from attention_explorer.session.file_format import FORMAT_NAME, FORMAT_VERSION, loads_session

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "examples"

TUTORIAL = "Tutorial examples"
WHY_SCALE = "Why scale"
MASKS = "Masks"
CHECKPOINTS = "Checkpoint experiments"


# -- helpers ----------------------------------------------------------------------------------
def num(x: float, places: int = 4) -> str:
    """One number as the notes print it (the engine's own formatting)."""
    return format_number(float(x), places)


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


# -- seed 001, section 4: three tokens, Q K V given --------------------------------------------
Q3 = [[1, 0], [1, 1], [0, 1]]
K3 = [[1, 0], [1, 1], [0, 1]]
V3 = [[1, 2], [0, 3], [4, 1]]


def three_tokens() -> dict:
    """Seed 001 §4: Q, K, V typed in, d_k = 2, the second row followed to its output."""
    d = doc(
        "three-tokens",
        title="Three tokens, Q, K and V typed in (d_k = 2)",
        group=TUTORIAL,
        order=10,
        source="seed 001, section 4",
        description=(
            "Three tokens whose queries, keys and values are given directly as 2-number "
            "vectors. Follow the middle token: its raw scores are 1, 2, 1, the scale is "
            "1/sqrt(2), and its output mixes all three value rows."
        ),
        tokens=["t1", "t2", "t3"],
        config={"heads": 1, "d_model": 2},
        inputs={"mode": "direct", "Q": [Q3], "K": [K3], "V": [V3]},
        focus=(1, 1),
    )
    t = trace_of(d)
    w, o = t.stage("weights", 0)[1], t.stage("head_outputs", 0)[1]
    note(
        d,
        "The tutorial rounds the weights.",
        f"It gives the middle row's weights as about [0.25, 0.5, 0.25]; exactly they are "
        f"{vec(w)}. The centre weight is {num(w[1] - 0.5)} above one half and each side "
        f"weight {num(0.25 - w[0])} below a quarter.",
    )
    note(
        d,
        "So the output is not exactly [1.25, 2.25].",
        f"[1.25, 2.25] is what the rounded weights give. With the exact weights the middle "
        f"token's output is {vec(o)}, a difference of {vec(o - np.array([1.25, 2.25]))}.",
    )
    return d


# -- seed 001, section 10: the NumPy version, np.random.seed(7) --------------------------------
def numpy_from_scratch() -> dict:
    """Seed 001 §10: x, w_q, w_k, w_v drawn in the tutorial's order after np.random.seed(7)."""
    rs = np.random.RandomState(7)  # the tutorial's legacy stream
    x = rs.randn(4, 6)  # [seq_len, d_model]
    w_q = rs.randn(6, 4)  # [d_model, d_k]
    w_k = rs.randn(6, 4)
    w_v = rs.randn(6, 4)
    d = doc(
        "numpy-from-scratch",
        title="Random projections: 4 tokens, d_model 6, d_k 4 (NumPy seed 7)",
        group=TUTORIAL,
        order=20,
        source="seed 001, section 10",
        description=(
            "Four random 6-number embeddings projected to queries, keys and values of size 4 "
            "by random matrices, drawn with NumPy's seed 7 in the tutorial's order (x, then "
            "W_Q, W_K, W_V). The tutorial prints no numbers; this file holds the draws so you "
            "can see them."
        ),
        tokens=["t0", "t1", "t2", "t3"],
        config={"heads": 1, "d_model": 6, "d_k": 4, "d_v": 4},
        inputs={
            "mode": "projection",
            "X": f64(x),
            "W_Q": f64(w_q),
            "W_K": f64(w_k),
            "W_V": f64(w_v),
        },
    )
    return d


# -- seed 000, part 4 and 5.4: the PyTorch toy example -------------------------------------------
def _torch_toy():
    """Replay seed 000's construction order; return numpy arrays in math orientation."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(123)
    embed = torch.nn.Embedding(6, 16)
    x = embed(torch.tensor([0, 1, 2, 3])).detach()  # [4, 16]
    lin = [torch.nn.Linear(16, 8, bias=False) for _ in range(3)]  # W_q, W_k, W_v (part 4.3)
    mha = [torch.nn.Linear(16, 16, bias=False) for _ in range(4)]  # W_q, W_k, W_v, W_o (5.4)
    with torch.no_grad():
        q, k, v = (layer(x) for layer in lin)  # [4, 8] each
        weights = F.softmax(q @ k.T / math.sqrt(8), dim=-1)  # [4, 4]
        Q, K, V = (layer(x).view(4, 4, 4).transpose(0, 1) for layer in mha[:3])  # [h, n, 4]
        heads = F.softmax(Q @ K.transpose(-2, -1) / 2.0, dim=-1) @ V  # [h, n, 4]
        output = mha[3](heads.transpose(0, 1).reshape(4, 16))  # [4, 16]
    # torch.nn.Linear stores weight as [out, in]; the engine's W is [in, out] (Q = X W).
    return {
        "X": x.numpy(),
        "single": [layer.weight.detach().T.numpy() for layer in lin],
        "multi": [layer.weight.detach().T.numpy() for layer in mha],
        "weights": weights.numpy(),
        "output": output.numpy(),
    }


TOY_PRINTED = [
    [0.2352, 0.2783, 0.2205, 0.2659],
    [0.2094, 0.3100, 0.2795, 0.2011],
    [0.3360, 0.2504, 0.2338, 0.1797],
    [0.3234, 0.2881, 0.2501, 0.1385],
]


def pytorch_toy(toy) -> dict:
    """Seed 000 §4.3-4.4: one head, d_k = d_v = 8, from torch.manual_seed(123)."""
    W_q, W_k, W_v = toy["single"]
    d = doc(
        "pytorch-toy",
        title="PyTorch toy: 4 tokens, d_model 16, one head of size 8",
        group=TUTORIAL,
        order=30,
        source="seed 000, part 4",
        description=(
            "Token ids 0, 1, 2, 3 looked up in a 6 x 16 embedding table, then projected by "
            "three bias-free 16 -> 8 linear layers, all drawn after torch.manual_seed(123). "
            "The 4 x 4 weight matrix is the one the tutorial prints."
        ),
        tokens=["t0", "t1", "t2", "t3"],
        config={"heads": 1, "d_model": 16, "d_k": 8, "d_v": 8},
        inputs={
            "mode": "projection",
            "X": f32(toy["X"]),
            "W_Q": f32(W_q),
            "W_K": f32(W_k),
            "W_V": f32(W_v),
        },
    )
    t = trace_of(d)
    gap = float(np.abs(t.stage("weights", 0) - np.array(TOY_PRINTED)).max())
    ours = float(np.abs(t.stage("weights", 0) - toy["weights"]).max())
    assert gap < 5e-5 and ours < 1e-6, (gap, ours)
    note(
        d,
        "Stored as numbers, not as a seed.",
        "The embeddings and the three weight matrices are the float32 values torch draws; "
        "the app reads them from this file and never needs torch. torch's Linear keeps its "
        "weight as [out, in] (8 x 16); here W_Q, W_K and W_V are that matrix transposed, "
        "16 x 8, so that Q = X W_Q.",
    )
    note(
        d,
        "Matches the printed matrix.",
        f"Every attention weight agrees with the tutorial's 4-decimal printout; the largest "
        f"difference is {num(gap, 6)}, less than the printout's rounding.",
    )
    return d


def pytorch_toy_multihead(toy, key: str, order: int, group: str) -> dict:
    """Seed 000 §5.4: 4 heads of 4 with W_O, drawn right after the single-head layers."""
    W_q, W_k, W_v, W_o = toy["multi"]
    d = doc(
        key,
        title="PyTorch toy, four heads of 4 with an output projection",
        group=group,
        order=order,
        source="seed 000, section 5.4",
        description=(
            "The same four embeddings, now split across 4 heads of size 4 by 16 -> 16 "
            "projections, concatenated back to 16 numbers and mixed by W_O. The four layers "
            "are drawn from the same seeded stream, just after the single-head ones."
        ),
        tokens=["t0", "t1", "t2", "t3"],
        config={"heads": 4, "d_model": 16},
        inputs={
            "mode": "projection",
            "X": f32(toy["X"]),
            "W_Q": f32(W_q),
            "W_K": f32(W_k),
            "W_V": f32(W_v),
            "W_O": f32(W_o),
        },
    )
    t = trace_of(d)
    gap = float(np.abs(t["output"] - toy["output"]).max())
    assert gap < 1e-5, gap
    note(
        d,
        "Only shapes are printed in the tutorial.",
        f"It shows Q as 4 x 4 x 4 (heads x tokens x size), the concatenation and the output "
        f"as 4 x 16. The numbers here reproduce torch's own run of that code: the largest "
        f"difference in the final output is {gap:.1e}.",
    )
    return d


def heads_not_dividing(toy) -> dict:
    """Seed 000 checkpoint 10: a valid 16/4 file whose experiment asks for 3 heads."""
    d = pytorch_toy_multihead(toy, "checkpoint-heads-not-dividing", 170, CHECKPOINTS)
    d["name"] = "d_model 16 split into 3 heads?"
    d["description"] = (
        "The four-head PyTorch toy (d_model 16, heads of 4). Ask for 3 heads instead and "
        "see what the engine says."
    )
    d["notes"] = []
    d["experiment"].update(
        source="seed 000, part 6, checkpoint 10",
        question="What happens if d_model is not divisible by the number of heads?",
        expect=(
            "16 numbers cannot be shared equally by 3 heads, so the engine refuses the change "
            "and names the heads setting, listing the head counts that do divide 16."
        ),
        **{"try": {"heads": 3}},
    )
    return d


# -- seed 004: "I love pizza" ----------------------------------------------------------------
PIZZA = [[1, 0], [2, 1], [0, 2]]


def pizza_single() -> dict:
    """Seed 004: single head, Q = K = V = the embeddings, softmax of raw scores."""
    d = doc(
        "i-love-pizza",
        title="I love pizza: one head with Q = K = V = the embeddings",
        group=TUTORIAL,
        order=40,
        source="seed 004, single-head attention",
        description=(
            "Three 2-number embeddings used directly as queries, keys and values. The "
            "tutorial follows 'love': scores 2, 5, 2 and a softmax taken on those raw scores, "
            "so scaling is off here."
        ),
        tokens=["I", "love", "pizza"],
        config={"heads": 1, "d_model": 2, "scale": "none"},
        inputs={"mode": "direct", "Q": [PIZZA], "K": [PIZZA], "V": [PIZZA]},
        try_={"scale": "sqrt_dk"},
        question="What changes when the scores are divided by sqrt(2), as a Transformer would?",
        expect="The row for 'love' softens: less weight on itself, more on 'I' and 'pizza'.",
        focus=(1, 1),
    )
    t = trace_of(d)
    w, o = t.stage("weights", 0)[1], t.stage("head_outputs", 0)[1]
    note(
        d,
        "Rounded weights, and an output rounded the wrong way.",
        f"The tutorial gives about [0.045, 0.91, 0.045]; exactly the weights are {vec(w)}. "
        f"Its output [1.87, 1.00] comes from those rounded weights (0.045 + 2 x 0.91 = "
        f"1.865); with the exact weights the output is {vec(o)}, so the first number is "
        f"{num(1.87 - o[0])} below 1.87 and rounds to 1.86.",
    )
    return d


def pizza_two_heads() -> dict:
    """Seed 004: two heads, each with its own q, k, v for the query 'love'."""
    q = [[[1, 1]], [[1, 3]]]  # [h, 1, 2]: only the query of "love" is given
    k = [[[1, 1], [1, 2], [0, 1]], [[0, 1], [1, 1], [1, 3]]]  # [h, 3, 2]
    v = [[[1, 0], [2, 1], [0, 1]], [[1, 1], [2, 0], [5, 5]]]  # [h, 3, 2]
    d = doc(
        "i-love-pizza-two-heads",
        title="I love pizza: two heads, then the concatenation",
        group=TUTORIAL,
        order=50,
        source="seed 004, multi-head attention",
        description=(
            "Each of two heads has its own query for 'love' and its own keys and values for "
            "I, love and pizza. The tutorial's head 1 (head 0 here: the app counts from 0) leans "
            "on 'love', its head 2 (head 1 here) almost only on 'pizza'; the two 2-number "
            "outputs are joined into one 4-number vector. The tutorial gives only the query "
            "of 'love', so this is that one query against all three keys."
        ),
        tokens=["love"],
        kv_tokens=["I", "love", "pizza"],
        config={"heads": 2, "d_model": 4, "scale": "none", "attention": "cross"},
        inputs={"mode": "direct", "Q": q, "K": k, "V": v},
    )
    t = trace_of(d)
    w1, w2 = t.stage("weights", 0)[0], t.stage("weights", 1)[0]
    a1, a2 = t.stage("head_outputs", 0)[0], t.stage("head_outputs", 1)[0]
    note(
        d,
        "Head 0 (the tutorial's head 1) is off in the second decimal.",
        f"The tutorial's weights [0.24, 0.66, 0.10] are exactly {vec(w1)}, so 'love' gets "
        f"0.67 and 'pizza' 0.09 at two decimals. Its output [1.56, 0.76] is exactly "
        f"{vec(a1)}.",
    )
    note(
        d,
        "Head 1 (the tutorial's head 2) and the concatenation.",
        f"Its weights {vec(w2)} round to the tutorial's [0.001, 0.002, 0.997]. Its "
        f"output, given as about [4.99, 4.99], is {vec(a2)}. The concatenation is "
        f"{vec(t['concat'][0])}, not [1.56, 0.76, 4.99, 4.99].",
    )
    return d


def pizza_supposed_scores() -> dict:
    """Seed 004's self-attention steps: score rows that the tutorial supposes, not computes."""
    rows = [[2, 8, 4], [5, 2, 9]]
    eye = np.eye(3).tolist()
    d = doc(
        "i-love-pizza-supposed-scores",
        title="I love pizza: the supposed score rows [2, 8, 4] and [5, 2, 9]",
        group=TUTORIAL,
        order=60,
        source="seed 004, self-attention",
        description=(
            "The tutorial's self-attention walk-through supposes scores for 'I' (2, 8, 4) and "
            "for 'love' (5, 2, 9) without giving vectors. Here each key is a one-hot marker, "
            "so each score is simply a number of the query; each value is one-hot too, so "
            "the output row shows how much of v_I, v_love and v_pizza is mixed in."
        ),
        tokens=["I", "love"],
        kv_tokens=["I", "love", "pizza"],
        config={"heads": 1, "d_model": 3, "scale": "none", "attention": "cross"},
        inputs={"mode": "direct", "Q": [rows], "K": [eye], "V": [eye]},
    )
    t = trace_of(d)
    w = t.stage("weights", 0)
    note(
        d,
        "The row for 'I' is right to the printed precision.",
        f"The tutorial gives [0.002, 0.98, 0.018]; exactly {vec(w[0])}.",
    )
    note(
        d,
        "The row for 'love' does not follow from its scores.",
        f"The tutorial gives [0.1, 0.02, 0.88] for scores [5, 2, 9]; the softmax is "
        f"{vec(w[1])}. 'pizza' gets {num(w[1][2] - 0.88)} more than stated and 'I' "
        f"{num(0.1 - w[1][0])} less.",
    )
    return d


# -- seed 004: decoder attention over encoder states h1..h4 -----------------------------------
H = [[1, 1], [3, 2], [2, 4], [1, 5]]
H_NAMES = ["h1 (हम)", "h2 (बाजार)", "h3 (गये)", "h4 (थे)"]
HINDI_STEPS = {  # step: (tutorial's scores, tutorial's softmax)
    1: ([3, 8, 8, 7], [0.003, 0.45, 0.45, 0.097]),
    2: ([2, 9, 6, 1], [0.001, 0.90, 0.09, 0.009]),
    3: ([1, 2, 10, 3], [0.001, 0.01, 0.97, 0.019]),
}


def hindi_decoder() -> dict:
    """Seed 004: the decoder states s1, s2 as queries against the encoder states."""
    d = doc(
        "hindi-decoder",
        title="Decoder attention over encoder states h1..h4 (Hindi to English)",
        group=TUTORIAL,
        order=70,
        source="seed 004, attention example",
        description=(
            "A decoder translating 'हम बाजार गये थे' asks which encoder state matters for "
            "each English word. Its states s1 = [2, 1] and s2 = [4, 2] are the queries; the "
            "four encoder states are both keys and values. As in the tutorial, the softmax "
            "is taken on the raw dot products (no scaling)."
        ),
        tokens=["s1 -> we", "s2 -> had"],
        kv_tokens=H_NAMES,
        config={"heads": 1, "d_model": 2, "scale": "none", "attention": "cross"},
        inputs={"mode": "direct", "Q": [[[2, 1], [4, 2]]], "K": [H], "V": [H]},
        try_={"scale": "sqrt_dk"},
        question="How would the first step look with the usual 1/sqrt(d_k) scaling?",
        expect="With the scores divided by sqrt(2), h1 and h4 win back some weight.",
        focus=(0, 1),
    )
    t = trace_of(d)
    s, w, c = t.stage("scores", 0), t.stage("weights", 0), t.stage("head_outputs", 0)
    note(
        d,
        "Step 1: the scores are right, the softmax is not.",
        f"The scores {vec(s[0])} match the tutorial. Their softmax is {vec(w[0])}, not "
        f"[0.003, 0.45, 0.45, 0.097]: h2 and h3 get {num(0.45 - w[0][1])} less than stated "
        f"and h4 {num(w[0][3] - 0.097)} more. The context vector is therefore {vec(c[0])}, "
        f"not [2.35, 3.19].",
    )
    note(
        d,
        "Step 2: the state s2 does not give the scores shown.",
        f"s2 = [4, 2] is exactly twice s1, so its scores are {vec(s[1])}, twice step 1's, "
        f"and its weights are {vec(w[1])}. The tutorial instead supposes the scores "
        f"[2, 9, 6, 1]; the example 'hindi-decoder-supposed-scores' follows those.",
    )
    return d


def hindi_supposed() -> dict:
    """Seed 004: the tutorial's score rows for steps 1-3, with one-hot keys and V = h."""
    rows = [HINDI_STEPS[k][0] for k in (1, 2, 3)]
    d = doc(
        "hindi-decoder-supposed-scores",
        title="Decoder steps 1-3 with the tutorial's own score rows",
        group=TUTORIAL,
        order=80,
        source="seed 004, attention example",
        description=(
            "Later decoder steps in the tutorial give score rows without a decoder state. To "
            "reproduce them, each key here is a one-hot marker, so each score is just a "
            "number of the query; the values are still the encoder states h1..h4, so each "
            "output row is that step's context vector."
        ),
        tokens=["step 1 -> we", "step 2 -> had", "step 3 -> gone"],
        kv_tokens=H_NAMES,
        config={"heads": 1, "d_model": 2, "scale": "none", "attention": "cross"},
        inputs={"mode": "direct", "Q": [rows], "K": [np.eye(4).tolist()], "V": [H]},
    )
    t = trace_of(d)
    w, c = t.stage("weights", 0), t.stage("head_outputs", 0)
    for i, step in enumerate((1, 2, 3)):
        scores, claimed = HINDI_STEPS[step]
        worst = int(np.argmax(np.abs(w[i] - np.array(claimed))))
        note(
            d,
            f"Step {step}: scores {vec(scores)}.",
            f"The tutorial's softmax is {vec(claimed, 3)}; the true one is {vec(w[i])} (the "
            f"largest gap is {num(abs(w[i][worst] - claimed[worst]))} at {H_NAMES[worst]}). "
            f"The context vector is {vec(c[i])}.",
        )
    note(
        d,
        "Steps 4 and 5 give weights only.",
        "For 'to' and 'market' the tutorial lists weights with no scores, so there is "
        "nothing to recompute; both of its rows do add up to 1.",
    )
    return d


# -- seed 003 and seed 000 §2.6: why scale -----------------------------------------------------
SAT = ["the", "cat", "sat", "on", "a", "mat"]


def why_scale(scaled: bool) -> dict:
    """Seed 003: one 64-number query against six keys, np.random.seed(0)."""
    rs = np.random.RandomState(0)  # the tutorial's legacy stream
    q = rs.randn(64)  # [d_k]
    k = rs.randn(6, 64)  # [m, d_k]
    key = "why-scale-scaled" if scaled else "why-scale-unscaled"
    d = doc(
        key,
        title=(
            "Why scale: 64 dimensions, scores divided by 8"
            if scaled
            else "Why scale: 64 dimensions, raw scores"
        ),
        group=WHY_SCALE,
        order=100 if not scaled else 110,
        source="seed 003, 'What would happen if we didn't divide it?'",
        description=(
            (
                "One 64-number query against six keys, its scores divided by sqrt(64) = 8 "
                "before the softmax. "
                if scaled
                else "One 64-number query against six keys, its raw scores (spread over tens) "
                "fed straight to the softmax. "
            )
            + "The query of 'sat' and the keys of 'the cat sat on a mat' are random normal "
            "numbers drawn as in the tutorial (NumPy seed 0). Each value is a one-hot marker, "
            "so the output row repeats the weights."
        ),
        tokens=["sat"],
        kv_tokens=SAT,
        config={
            "heads": 1,
            "d_model": 6,
            "attention": "cross",
            "scale": "sqrt_dk" if scaled else "none",
        },
        inputs={"mode": "direct", "Q": [[f64(q)]], "K": [f64(k)], "V": [np.eye(6).tolist()]},
        try_={"scale": "none"} if scaled else {"scale": "sqrt_dk"},
        question=(
            "What happens if the division by sqrt(d_k) is left out?"
            if scaled
            else "What does dividing the scores by sqrt(64) = 8 change?"
        ),
        expect=(
            "Almost all the weight piles onto one key and the others nearly vanish."
            if scaled
            else "The row spreads out: several keys keep a real share."
        ),
    )
    raw = trace_of(d, scale="none").stage("weights", 0)[0]
    soft = trace_of(d, scale="sqrt_dk").stage("weights", 0)[0]
    note(
        d,
        "The two rows side by side.",
        f"Raw scores give {vec(raw, 3)}; divided by 8 they give {vec(soft, 3)}. The "
        f"tutorial shows no numbers here; these are what its code computes with seed 0.",
    )
    return d


def scale_pair(dk: int) -> dict:
    """Seed 000 §2.6: score 8 at d_k = 4 and score 32 at d_k = 64 both scale to 4."""
    if dk == 4:
        q = [2, 2, 2, 2]
        keys = [[1, 1, 1, 1], [1, 1, 0, 0], [1, -1, 1, -1]]  # scores 8, 4, 0
    else:
        half = [0.5] * 32 + [0.0] * 32
        q = [1] * 64
        keys = [[0.5] * 64, half, [0.5, -0.5] * 32]  # scores 32, 16, 0
    top = 4 * dk**0.5
    d = doc(
        f"scale-dk-{dk}",
        title=f"Score {top:g} at d_k = {dk}: scaled it becomes 4",
        group=WHY_SCALE,
        order=120 if dk == 4 else 130,
        source="seed 000, section 2.6",
        description=(
            f"One query against three keys in {dk} dimensions, with raw scores {top:g}, "
            f"{top / 2:g} and 0. Divided by sqrt({dk}) = {dk**0.5:g} they become 4, 2 and 0, "
            f"the same as in the other d_k example, so both rows get the same weights. Each "
            f"value is a one-hot marker, so the output repeats the weights."
        ),
        tokens=["query"],
        kv_tokens=["full match", "half match", "no match"],
        config={"heads": 1, "d_model": 3, "attention": "cross"},
        inputs={"mode": "direct", "Q": [[q]], "K": [keys], "V": [np.eye(3).tolist()]},
        try_={"scale": "none"},
        question="What if the raw score went into the softmax unscaled?",
        expect=(
            "At d_k = 4 the top key takes most of the row; at d_k = 64 it takes "
            "practically all of it. Scaling is what keeps the two comparable."
        ),
    )
    return d


# -- seed 001, section 6: masks ----------------------------------------------------------------
def causal_mask() -> dict:
    """Seed 001 §6 with §4's numbers: a causal mask hides the keys above the diagonal."""
    return doc(
        "causal-mask",
        title="Causal mask on the three-token example",
        group=MASKS,
        order=140,
        source="seed 001, section 6",
        description=(
            "The three tokens of the d_k = 2 example, now as a decoder sees them: each token "
            "may look at itself and earlier tokens only. The hidden scores become -inf, "
            "so their weights are exactly 0."
        ),
        tokens=["t1", "t2", "t3"],
        config={"heads": 1, "d_model": 2, "mask": "causal"},
        inputs={"mode": "direct", "Q": [Q3], "K": [K3], "V": [V3]},
        try_={"mask": "none"},
        question="What changes when the mask is removed?",
        expect="Weight appears above the diagonal: t1 and t2 start drawing on later tokens.",
    )


def padding_mask() -> dict:
    """Seed 001 §6: a padding mask hides a pad token added only for batching."""
    pad_q = Q3 + [[0, 0]]
    pad_k = K3 + [[0, 0]]
    pad_v = V3 + [[0, 0]]
    return doc(
        "padding-mask",
        title="Padding mask: a <pad> token nobody may attend to",
        group=MASKS,
        order=150,
        source="seed 001, section 6",
        description=(
            "The three-token example with a fourth, artificial <pad> token (all zeros) added "
            "to fill a batch. The padding mask hides it as a key from every query, so the "
            "real tokens' weights and outputs are exactly those without it."
        ),
        tokens=["t1", "t2", "t3", "<pad>"],
        config={"heads": 1, "d_model": 2, "mask": "padding", "padded_keys": [3]},
        inputs={"mode": "direct", "Q": [pad_q], "K": [pad_k], "V": [pad_v]},
        try_={"mask": "none"},
        question="What if the padding were not masked?",
        expect=(
            "The <pad> column takes a share of every row, and since its value is zero "
            "the real tokens' outputs shrink."
        ),
    )


# -- seed 000, part 6: checkpoint experiments ---------------------------------------------------
def checkpoint(key, order, title, description, question, expect, tokens, Q, K, V, **kw):
    """A small direct-mode self-attention example for one checkpoint question."""
    cfg = {"heads": 1, "d_model": len(V[0])}
    cfg.update(kw.pop("config", {}))
    return doc(
        key,
        title=title,
        group=CHECKPOINTS,
        order=order,
        description=description,
        tokens=tokens,
        config=cfg,
        inputs={"mode": "direct", "Q": [Q], "K": [K], "V": [V]},
        question=question,
        expect=expect,
        **kw,
    )


def checkpoints() -> list[dict]:
    """Seed 000 part 6, checkpoints 1, 2, 5, 7 and 11 (9 and 10 have their own builders)."""
    src = "seed 000, part 6, checkpoint "
    return [
        checkpoint(
            "checkpoint-similar-keys",
            160,
            "Two tokens with nearly identical keys",
            "'cat' and 'kitten' have keys that differ only in the second decimal.",
            "What happens if two tokens have nearly identical keys?",
            "In every row the 'cat' and 'kitten' columns get almost the same weight.",
            ["cat", "kitten", "car", "the"],
            Q=[[2, 1], [0.5, 1.5], [-1, 2], [1, -1]],
            K=[[1.0, 0.2], [1.02, 0.19], [-0.5, 1.0], [0.1, -0.8]],
            V=[[1, 0], [0, 1], [2, 2], [-1, 1]],
            source=src + "1",
        ),
        checkpoint(
            "checkpoint-dominant-score",
            161,
            "One score far larger than the rest",
            "The query of 'it' matches the key of 'animal' far better than any other key.",
            "What happens if one score in a row is much larger than the rest?",
            "The 'it' row puts nearly all its weight on 'animal', and its output is almost "
            "exactly animal's value. Try a temperature of 5 to soften the row.",
            ["it", "animal", "street", "tired"],
            Q=[[6, 0], [1, 1], [0, 1], [1, 0]],
            K=[[0.2, 0.1], [2, 0], [0.1, 0.3], [-0.2, 0.4]],
            V=[[0, 0], [1, 2], [3, -1], [-2, 1]],
            source=src + "2",
            try_={"temperature": 5.0},
            focus=(0, 1),
        ),
        checkpoint(
            "checkpoint-equal-scores",
            162,
            "All scores in a row equal",
            "The first query scores exactly 1.5 against every key, so nothing stands out.",
            "What happens if all scores in one row are equal?",
            "Row 'a' is 1/4 everywhere and its output is the plain average of the four values.",
            ["a", "b", "c", "d"],
            Q=[[0, 1.5], [1, 0], [-1, 1], [2, 1]],
            K=[[1, 1], [2, 1], [-1, 1], [0.5, 1]],
            V=[[4, 0], [0, 4], [2, 2], [-2, 2]],
            source=src + "5",
            focus=(0, 0),
        ),
        checkpoint(
            "checkpoint-masked-token",
            163,
            "A masked token",
            "'secret' would win every row, but a mask hides it from all queries.",
            "What happens when a mask blocks a token?",
            "The 'secret' column is exactly 0 and the other weights share the whole row. "
            "Remove the mask and 'secret' takes most of each row.",
            ["we", "keep", "secret", "things"],
            Q=[[1, 1], [1, 0], [0, 1], [1, 2]],
            K=[[0.5, 0], [0, 0.5], [2, 2], [0.3, 0.3]],
            V=[[1, 0], [0, 1], [5, 5], [1, 1]],
            source=src + "7",
            config={"mask": "padding", "padded_keys": [2]},
            try_={"mask": "none"},
        ),
        checkpoint(
            "checkpoint-near-zero-query",
            164,
            "A query close to zero",
            "The first query is almost the zero vector, so all its scores are almost 0.",
            "What happens if a query vector is close to zero?",
            "The first row is nearly uniform and its output is close to the average value. "
            "Try temperature 0.01: even tiny differences then decide.",
            ["um", "the", "big", "dog"],
            Q=[[0.01, -0.02], [2, 0], [0, 2], [1, 1]],
            K=[[1, 0], [0, 1], [1, 1], [-1, 0.5]],
            V=[[1, 0], [0, 1], [1, 1], [-1, 0]],
            source=src + "11",
            try_={"temperature": 0.01},
            focus=(0, 0),
        ),
    ]


def identical_embeddings() -> dict:
    """Seed 000 checkpoint 9: a repeated word, projection mode, no positions."""
    rng = np.random.default_rng(9)
    words = {w: np.round(rng.normal(size=4), 2) for w in ("the", "cat", "chased", "dog")}
    tokens = ["the", "cat", "chased", "the", "dog"]
    X = np.stack([words[w] for w in tokens])  # [5, 4]
    W = [np.round(rng.normal(scale=0.7, size=(4, 4)), 2) for _ in range(3)]  # [4, 4] each
    return doc(
        "checkpoint-identical-embeddings",
        title="The same word twice, with no positional information",
        group=CHECKPOINTS,
        order=165,
        source="seed 000, part 6, checkpoint 9",
        description=(
            "'the' appears at positions 0 and 3 with the same embedding. Nothing tells the "
            "two apart: no positional encoding is added before the projections."
        ),
        tokens=tokens,
        config={"heads": 1, "d_model": 4},
        inputs={
            "mode": "projection",
            "X": f64(X),
            "W_Q": f64(W[0]),
            "W_K": f64(W[1]),
            "W_V": f64(W[2]),
        },
        question="What happens if two tokens have identical embeddings and no positions?",
        expect=(
            "Both 'the' rows are identical, and so are both 'the' columns. Add "
            "sinusoidal positions and the two copies start to differ."
        ),
        try_={"positional": "sinusoidal"},
    )


# -- writing -----------------------------------------------------------------------------------
def build_all() -> list[dict]:
    """Every example document, in menu order."""
    toy = _torch_toy()
    docs = [
        three_tokens(),
        numpy_from_scratch(),
        pytorch_toy(toy),
        pytorch_toy_multihead(toy, "pytorch-toy-multihead", 35, TUTORIAL),
        pizza_single(),
        pizza_two_heads(),
        pizza_supposed_scores(),
        hindi_decoder(),
        hindi_supposed(),
        why_scale(False),
        why_scale(True),
        scale_pair(4),
        scale_pair(64),
        causal_mask(),
        padding_mask(),
        *checkpoints(),
        identical_embeddings(),
        heads_not_dividing(toy),
    ]
    for d in docs:
        if not d["notes"]:
            del d["notes"]
        trace_of(d)  # every example must load, validate and compute
    return sorted(docs, key=lambda d: d["experiment"]["order"])


def _dump(value, indent: int = 0) -> str:
    """JSON with each innermost list of numbers on one line (readable matrices)."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_dump(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}" if items else "{}"
    if isinstance(value, list) and value and all(isinstance(v, (list, dict)) for v in value):
        items = [f"{inner}{_dump(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def render(d: dict) -> str:
    """The file text of one example."""
    body = {k: v for k, v in d.items() if k != "_key"}
    return _dump(body) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, compare) every example file; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    docs = build_all()
    wanted = {f"{d['_key']}.json": render(d) for d in docs}
    if args.check:
        on_disk = {p.name for p in OUT.glob("*.json")}
        stale = sorted(
            n
            for n, text in wanted.items()
            if not (OUT / n).is_file() or (OUT / n).read_text("utf-8") != text
        )
        extra = sorted(on_disk - set(wanted))
        for name in stale + extra:
            print(f"out of date: {name}")
        return 1 if stale or extra else 0
    for old in OUT.glob("*.json"):
        if old.name not in wanted:
            old.unlink()
    for name, text in wanted.items():
        (OUT / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(wanted)} examples to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
