"""Benchmark of activation patching (issue 29 item 5): the resid_pre map at 16 tokens against
the naive count of one whole model run per cell.

    python -m attention_explorer.diagnostics.patch_bench [--models minilm-shaped,tiny-induction]
        [--tokens 16] [--repeat 3] [--dtype float32]

A map costs the clean run, the corrupted run and, per cell (layer l, position p), one partial
run from block l on, started from the cached residual (:mod:`attention_explorer.causal`): for
L layers and n positions ``2 L + n L (L + 1) / 2`` block passes, against ``(n L + 2) L`` for a
whole run per cell.

The models: **minilm-shaped**, a random Llama-layout checkpoint with all-MiniLM-L6-v2's sizes
(6 layers, 12 heads, d_model 384, d_ff 1536, a 30522-word table), written here with
:func:`~attention_explorer.diagnostics.llama_scale_bench.write_checkpoint`, because the real
MiniLM has no output head (a sentence-embedding model: patching refuses it by name, there is
no logit to restore); its byte-level tokenizer makes a 16-character text 16 tokens. Its
gated feed-forward makes three d x d_ff products a layer where MiniLM's makes two, so a
layer costs about 1.3x MiniLM's.
**tiny-induction**, the shipped 2-layer GPT-2 (d_model 64, one head a layer), on a repeated
list of 16 words against the same list with the first run shuffled. **smoke** (d_model 32,
2 layers) is what the smoke test runs.

Each row: the cells of the map, the median seconds of ``patch`` (warm, one BLAS thread: its
default), the estimate :func:`~attention_explorer.causal.patch_estimate` gave, the map with
BLAS on every core (``threads=None``; with ``--every-core``), one whole model run (one
thread), the naive time (cells + 2 whole runs) and the block passes of both (the map's last
block runs its feed-forward on the last row only, and its metric reads two rows of the
unembedding, so its passes are cheaper than a whole run's). The calibration line of the machine
(:mod:`attention_explorer.diagnostics.calibration`) comes first. Speed is reported here,
never asserted in tests.

Measured on the shared 2-core machine at load average 12 (calibration: python 48.5 ms, numpy
125.6 ms, total 174.1 ms), float32, medians of 3:

| model | layers x tokens | cells | patch map | estimate | one run | naive | speed-up | passes |
|---|---|---|---|---|---|---|---|---|
| minilm-shaped | 6 x 16 | 96 | 1850 ms | 1492 ms | 74.4 ms | 7289 ms | 3.9x | 348 / 588 |
| tiny-induction | 2 x 16 | 32 | 20 ms | 8 ms | 1.3 ms | 43 ms | 2.2x | 52 / 68 |

With BLAS on every core the same minilm-shaped map took 40-50 s on that busy machine (the
threads wait on each other), hence ``patch``'s one thread by default.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

#: Random Llama-layout checkpoints by name (config.json values).
SHAPES = {
    "minilm-shaped": {
        "hidden_size": 384,
        "intermediate_size": 1536,
        "num_hidden_layers": 6,
        "num_attention_heads": 12,
        "num_key_value_heads": 12,
        "vocab_size": 30522,
    },
    "smoke": {
        "hidden_size": 32,
        "intermediate_size": 48,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 300,
    },
}
LLAMA = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "max_position_embeddings": 512,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
    "hidden_act": "silu",
    "qkv_bias": False,
}
TINY = Path(__file__).resolve().parents[3] / "resources" / "models" / "tiny-induction"
RUN = "lion bear wolf frog duck goat swan crab".split()
SHUFFLED = "goat crab lion swan bear duck frog wolf".split()
PREFIX = "owl hen pig".split()
BYTES_TEXT = "the cat sat on the mat because it was tired and cold"


def prompts(name: str, tokens: int) -> tuple[str, str, str, str]:
    """(clean, corrupted, answer, wrong) of ``tokens`` tokens for model ``name``."""
    if name == "tiny-induction":
        words = PREFIX + RUN + RUN
        if not 4 < tokens <= len(words) - 1:
            raise ValueError(f"tiny-induction's prompts have 5..{len(words) - 1} tokens")
        clean = words[:tokens]
        corrupted = (PREFIX + SHUFFLED + RUN)[:tokens]
        answer = words[tokens]
        wrong = next(w for w in RUN if w != answer)
        return " ".join(clean), " ".join(corrupted), answer, wrong
    if tokens < 6:
        raise ValueError("the byte-level prompts have at least 6 tokens")
    repeat = 1 + tokens // len(BYTES_TEXT)
    clean = (BYTES_TEXT * repeat)[:tokens]  # one byte a token
    corrupted = (BYTES_TEXT.replace("cat", "dog") * repeat)[:tokens]
    return clean, corrupted, "h", "a"


def model_folder(name: str, root: Path) -> Path:
    """The folder of model ``name``: the shipped tiny-induction, or a random checkpoint
    written under ``root`` (once)."""
    if name == "tiny-induction":
        return TINY
    from attention_explorer.diagnostics.llama_scale_bench import write_checkpoint

    folder = root / name
    if not (folder / "config.json").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        write_checkpoint(folder, {**LLAMA, **SHAPES[name]})
    return folder


def _median_seconds(work, repeat: int) -> float:
    work()  # warm
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_model(
    name: str, root: Path, tokens: int, repeat: int, dtype: str, every_core: bool = False
) -> dict:
    """One row of the table for model ``name``."""
    from attention_explorer.causal import patch, patch_estimate
    from attention_explorer.pretrained import model_run
    from attention_explorer.pretrained.open_model import load_model

    loaded = load_model(model_folder(name, root))
    clean, corrupted, answer, wrong = prompts(name, tokens)
    n = len(loaded.tokenize(clean).ids)
    layers = loaded.weights.n_layers
    estimate = patch_estimate(loaded, clean, site="resid_pre", dtype=dtype, threads=1)
    options = dict(site="resid_pre", answer=answer, wrong=wrong, dtype=dtype)

    def ours_with(threads):
        return _median_seconds(
            lambda: patch(loaded, clean, corrupted, threads=threads, **options), repeat
        )

    ours, all_cores = ours_with(1), ours_with(None) if every_core else None
    whole = _median_seconds(lambda: model_run(loaded, clean, dtype=dtype, threads=1), repeat)
    cells = layers * n
    return {
        "model": name,
        "layers": layers,
        "tokens": n,
        "cells": cells,
        "ours": ours,
        "every_core": all_cores,
        "estimate": estimate,
        "whole": whole,
        "naive": (cells + 2) * whole,
        "passes": 2 * layers + n * layers * (layers + 1) // 2,
        "naive_passes": (cells + 2) * layers,
    }


def _ms(seconds: float | None) -> str:
    """Milliseconds, or a dash for a row not measured."""
    return "-" if seconds is None else f"{seconds * 1e3:.0f} ms"


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| model | layers x tokens | cells | patch map | estimate | every core | one run | "
        "naive (cells + 2 runs) | speed-up | block passes (ours / naive) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['layers']} x {r['tokens']} | {r['cells']} | "
            f"{r['ours'] * 1e3:.0f} ms | {r['estimate'] * 1e3:.0f} ms | "
            f"{_ms(r['every_core'])} | "
            f"{r['whole'] * 1e3:.1f} ms | {r['naive'] * 1e3:.0f} ms | "
            f"{r['naive'] / r['ours']:.1f}x | {r['passes']} / {r['naive_passes']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the calibration line and the table."""
    from attention_explorer.diagnostics.calibration import calibration_line

    parser = argparse.ArgumentParser(prog="patch_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="minilm-shaped,tiny-induction")
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument("--dir", help="where to write the random checkpoints (default: a temp)")
    parser.add_argument(
        "--every-core",
        action="store_true",
        help="also time the map with BLAS on every core (slow on a busy machine)",
    )
    args = parser.parse_args(argv)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m != "tiny-induction" and m not in SHAPES]
    if unknown:
        choices = ", ".join(["tiny-induction", *SHAPES])
        parser.error(f"unknown model {unknown[0]!r}; choose from {choices}")
    print(calibration_line(), flush=True)
    with tempfile.TemporaryDirectory() as temp:
        root = Path(args.dir) if args.dir else Path(temp)
        rows = [
            bench_model(m, root, args.tokens, args.repeat, args.dtype, args.every_core)
            for m in names
        ]
    print(f"resid_pre patching map, {args.dtype}, medians of {args.repeat} warm runs")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
