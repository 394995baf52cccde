"""The worked example "The cat sat on the mat because it was tired." through all-MiniLM-L6-v2.

tools/make_examples.py (with the MiniLM package installed) writes :func:`document` into
``resources/examples/minilm-it-cat.json``: the real Q, K and V of layer 5's twelve heads
(direct mode, 7 significant digits, about 150 KB), so the example opens without the model and
without slowing the Examples menu; File > Open Model… gives the full layer with X and the
weights. The
walkthrough's answer (which heads send "it" to "cat") comes from :mod:`.focus`, computed from
the live numbers, never from this file's text.
"""

from __future__ import annotations

from attention_explorer.engine import AttentionConfig, AttentionInputs, compute
from attention_explorer.pretrained.open_model import from_model
from attention_explorer.session.document import SessionData
from attention_explorer.session.file_format import session_to_dict

MODEL = "all-MiniLM-L6-v2"
TEXT = "The cat sat on the mat because it was tired."
LAYER = 5
KEY = "minilm-it-cat"


def build() -> SessionData:
    """The example session, straight from the model (needs the MiniLM package)."""
    session = from_model(MODEL, TEXT, layer=LAYER)
    stages = compute(session.inputs, session.config, dtype="float64", stages=("Q", "K", "V"))
    heads, d_k = session.config.heads, session.config.head_dim
    note = (
        "Where the numbers come from",
        f"all-MiniLM-L6-v2 read the sentence up to layer {LAYER}; this layer's Q, K and V are "
        "X W + b with the model's own weights. The walkthrough's answer about “it” and “cat” "
        "is computed from these numbers as they are now.",
    )
    return session.with_changes(
        notes=(note,),
        config=AttentionConfig(mode="direct", heads=heads, d_model=heads * d_k, d_k=d_k, d_v=d_k),
        inputs=AttentionInputs(
            Q=stages.stages["Q"], K=stages.stages["K"], V=stages.stages["V"]
        ),  # [12, 13, 32] each: X W + b of the real layer
        name="MiniLM: which heads tie “it” to “cat”?",
        description=(
            f"Layer {LAYER} of the real all-MiniLM-L6-v2 (12 heads, d_model 384) reading "
            f"“{TEXT}” Q, K and V are the model's own for every head (X W + b, rounded to "
            "7 significant digits): edit any of them. Follow “it” and see which heads put "
            "their weight on “cat”. File > Open Model… opens the whole layer, X and weights."
        ),
        experiment={
            "group": "Real models",
            "order": 900,
            "question": "Which heads of this layer resolve “it” to “cat”?",
            "expect": "Open the walkthrough on the “it” row: it names the heads whose "
            "weight on “cat” is largest, from the numbers as they are now. Edit a query or a key "
            "and the answer changes.",
            "focus": {"query": "it", "key": "cat"},
            "model": {"name": MODEL, "text": TEXT, "layer": LAYER},
        },
    )


def _compact(value):
    """Nested lists of floats written with 7 significant digits."""
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return float(f"{value:.7g}")


def document() -> dict:
    """The example as a session-file dict (numbers to 7 significant digits).

    tools/make_examples.py renders it into resources/examples/minilm-it-cat.json.
    """
    doc = session_to_dict(build())
    doc["inputs"] = {k: _compact(v) if isinstance(v, list) else v for k, v in doc["inputs"].items()}
    return doc
