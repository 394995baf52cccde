"""Benchmark: open a real model and run all its layers on a 32-token sentence, numpy.

    python -m attention_explorer.models.bench [--model all-MiniLM-L6-v2] [--runs 3] [--repeat 20]

Each run is a new Python process ("cold": interpreter start, imports, reading the weights and
the tokenizer, then every layer), which then repeats the work with the model kept ("warm").
It runs once as installed and once with OPENBLAS_NUM_THREADS=1: the forward pass limits BLAS
to one thread itself (threadpoolctl), so both rows should agree; without that limit the
default row was 8x slower warm on two busy cores. Prints a table; timings are medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

#: 32 MiniLM tokens with [CLS] and [SEP].
SENTENCE = (
    "When the little cat finally came home after the long storm, it curled up on the warm "
    "mat by the door because it was so tired and cold."
)

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from attention_explorer.models import from_model, load_model, model_attention
t1 = time.perf_counter()
model = load_model(sys.argv[1])
t2 = time.perf_counter()
weights, tokens = model_attention(model, sys.argv[2])
t3, done = time.perf_counter(), time.time()
repeat = int(sys.argv[3])
warm, layer = [], []
for _ in range(repeat):
    a = time.perf_counter(); model_attention(model, sys.argv[2])
    warm.append(time.perf_counter() - a)
    a = time.perf_counter(); from_model(model, sys.argv[2], layer=model.weights.n_layers - 1)
    layer.append(time.perf_counter() - a)
warm.sort(); layer.sort()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "done": done,
                  "warm": warm[len(warm) // 2], "layer": layer[len(layer) // 2],
                  "tokens": len(tokens), "shape": list(weights.shape)}))
"""


def run_once(model: str, text: str, repeat: int, threads: str | None) -> dict:
    """One cold process; returns its phase timings plus ``cold``, spawn to finished work."""
    env = dict(os.environ)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)
        if threads is not None:
            env[name] = threads
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, model, text, str(repeat)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr.strip().splitlines()[-1] if done.stderr else "bench failed")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["cold"] = result["done"] - started
    return result


def table(rows: list[tuple[str, list[dict]]]) -> str:
    """The printed table: one line per thread setting, medians over the runs."""
    head = (
        f"{'BLAS threads':<13} {'cold: start->done':>18} {'import':>8} {'load':>8} "
        f"{'1st run':>8} {'warm, all layers':>17} {'warm, 1 layer':>14}"
    )
    lines = [head, "-" * len(head)]
    for label, runs in rows:
        med = {
            k: statistics.median(r[k] for r in runs)
            for k, v in runs[0].items()
            if isinstance(v, float)
        }
        lines.append(
            f"{label:<13} {med['cold']:>16.3f} s {med['import']:>6.3f} s {med['load']:>6.3f} s "
            f"{med['first']:>6.3f} s {med['warm'] * 1000:>14.1f} ms {med['layer'] * 1000:>11.1f} ms"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--text", default=SENTENCE)
    parser.add_argument("--runs", type=int, default=3, help="cold processes per setting")
    parser.add_argument("--repeat", type=int, default=20, help="warm repeats per process")
    args = parser.parse_args(argv)
    rows = []
    for label, threads in (("as installed", None), ("1 (env)", "1")):
        rows.append(
            (
                label,
                [
                    run_once(args.model, args.text, args.repeat, threads)
                    for _ in range(max(1, args.runs))
                ],
            )
        )
    first = rows[0][1][0]
    layers, heads, n, _ = first["shape"]
    print(
        f"{args.model}: {layers} layers x {heads} heads, {n} tokens, numpy float64, "
        f"{os.cpu_count()} CPU cores; median of {args.runs} cold processes, "
        f"warm = median of {args.repeat} repeats"
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
