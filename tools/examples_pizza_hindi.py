"""Tutorial examples from "Attention 101": "I love pizza", and decoder attention over h1..h4."""

from __future__ import annotations

import numpy as np
from example_kit import (
    ATTENTION_101,
    TUTORIAL,
    cite,
    doc,
    note,
    num,
    trace_of,
    vec,
)

# -- Attention 101: "I love pizza" -------------------------------------------------------------
PIZZA = [[1, 0], [2, 1], [0, 2]]


def pizza_single() -> dict:
    """Attention 101: single head, Q = K = V = the embeddings, softmax of raw scores."""
    d = doc(
        "i-love-pizza",
        title="I love pizza: one head with Q = K = V = the embeddings",
        group=TUTORIAL,
        order=40,
        source=cite(ATTENTION_101, "Single-Head-Self-Attention, “I love pizza”"),
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
    """Attention 101: two heads, each with its own q, k, v for the query 'love'."""
    q = [[[1, 1]], [[1, 3]]]  # [h, 1, 2]: only the query of "love" is given
    k = [[[1, 1], [1, 2], [0, 1]], [[0, 1], [1, 1], [1, 3]]]  # [h, 3, 2]
    v = [[[1, 0], [2, 1], [0, 1]], [[1, 1], [2, 0], [5, 5]]]  # [h, 3, 2]
    d = doc(
        "i-love-pizza-two-heads",
        title="I love pizza: two heads, then the concatenation",
        group=TUTORIAL,
        order=50,
        source=cite(ATTENTION_101, "Multi-Head-Self-Attention, “I love pizza”"),
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
    """Attention 101's self-attention steps: score rows that the tutorial supposes, not computes."""
    rows = [[2, 8, 4], [5, 2, 9]]
    eye = np.eye(3).tolist()
    d = doc(
        "i-love-pizza-supposed-scores",
        title="I love pizza: the supposed score rows [2, 8, 4] and [5, 2, 9]",
        group=TUTORIAL,
        order=60,
        source=cite(ATTENTION_101, "Single-Head-Self-Attention, the supposed scores"),
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


# -- Attention 101: decoder attention over encoder states h1..h4 -----------------------------------
H = [[1, 1], [3, 2], [2, 4], [1, 5]]
H_NAMES = ["h1 (हम)", "h2 (बाजार)", "h3 (गये)", "h4 (थे)"]
HINDI_STEPS = {  # step: (tutorial's scores, tutorial's softmax)
    1: ([3, 8, 8, 7], [0.003, 0.45, 0.45, 0.097]),
    2: ([2, 9, 6, 1], [0.001, 0.90, 0.09, 0.009]),
    3: ([1, 2, 10, 3], [0.001, 0.01, 0.97, 0.019]),
}


def hindi_decoder() -> dict:
    """Attention 101: the decoder states s1, s2 as queries against the encoder states."""
    d = doc(
        "hindi-decoder",
        title="Decoder attention over encoder states h1..h4 (Hindi to English)",
        group=TUTORIAL,
        order=70,
        source=cite(ATTENTION_101, "Attention example 1 (हम बाजार गये थे)"),
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
    """Attention 101: the tutorial's score rows for steps 1-3, with one-hot keys and V = h."""
    rows = [HINDI_STEPS[k][0] for k in (1, 2, 3)]
    d = doc(
        "hindi-decoder-supposed-scores",
        title="Decoder steps 1-3 with the tutorial's own score rows",
        group=TUTORIAL,
        order=80,
        source=cite(ATTENTION_101, "Attention example 1 (हम बाजार गये थे)"),
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
