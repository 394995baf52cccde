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
import sys
from pathlib import Path

import examples_basic as basic
import examples_experiments as experiments
import examples_induction as induction
import examples_pizza_hindi as pizza
import examples_variants as variants
from example_kit import TUTORIAL, trace_of

from attention_explorer.causal import worked_example as patching
from attention_explorer.generation import worked_example as kv_cache

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "examples"


# -- writing -----------------------------------------------------------------------------------
def build_all() -> list[dict]:
    """Every example document, in menu order."""
    toy = basic.torch_toy()
    docs = [
        basic.three_tokens(),
        basic.numpy_from_scratch(),
        basic.pytorch_toy(toy),
        basic.pytorch_toy_multihead(toy, "pytorch-toy-multihead", 35, TUTORIAL),
        pizza.pizza_single(),
        pizza.pizza_two_heads(),
        pizza.pizza_supposed_scores(),
        pizza.hindi_decoder(),
        pizza.hindi_supposed(),
        experiments.why_scale(False),
        experiments.why_scale(True),
        experiments.scale_pair(4),
        experiments.scale_pair(64),
        experiments.causal_mask(),
        experiments.padding_mask(),
        *experiments.checkpoints(),
        experiments.identical_embeddings(),
        experiments.shifted_positions("rope"),
        experiments.shifted_positions("sinusoidal"),
        basic.heads_not_dividing(toy),
        basic.minilm_it_cat(),
        induction.document(),
        patching.document(),
        *variants.documents(),
        kv_cache.sink_document(),
        kv_cache.latent_document(),
    ]
    for d in docs:
        source = d["experiment"].get("source")
        if source:  # the tutorial and section, named where the learner reads the notes
            text = f"From the tutorial {source}. The notes below give its values beside ours."
            d["notes"].insert(0, {"title": "Where this example comes from", "text": text})
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
