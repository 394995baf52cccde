"""Benchmark of the model run against transformers' eager forward, in the same process.

    python -m attention_explorer.diagnostics.model_bench [--model all-MiniLM-L6-v2] [--tokens 32
        256] [--repeat 10] [--sweep-tokens 16] [--no-torch] [--device cuda]

Rows (medians of ``--repeat`` warm runs; ours and transformers' timed in alternating blocks):

- the whole model run (attentions, hidden states, output) at each token count, float32 and
  float64, beside transformers eager (``output_attentions``, ``output_hidden_states``) in the
  same dtype, each as it runs by default (every core: ``threads=None``, and torch's default
  threads); the model run on torch (``backend="torch"``) beside the same; for float32 also
  both on one thread (the window's run, ``threads=1``, beside torch on one thread);
- an edit in the first and in the last layer, recomputed with ``reuse=`` (what the window
  does after an edit);
- edit → new output shown in the real window (offscreen Qt, ``--window-layer``, at the first
  token count): median and 95th percentile of ``--repeat`` W_Q edits (skipped with
  ``--no-window`` or without PySide6);
- the knockout sweep over every head at ``--sweep-tokens`` tokens, with its estimate.

``--device cuda`` runs both torch rows on a GPU (transformers' model moved there, each of its
runs waited for; ours hands its arrays back as numpy) and leaves out the cpu-only rows.

A calibration line of the machine (:mod:`attention_explorer.diagnostics.calibration`) comes
first, so runs on different machines can be compared. Speed is reported here, never asserted
in tests.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from dataclasses import replace

import numpy as np

#: Words repeated to make a text of any token count.
WORDS = (
    "when the little cat finally came home after the long storm it curled up on the warm mat "
    "by the door because it was so tired and cold"
).split()


def text_of(loaded, tokens: int) -> str:
    """A text of whole words that ``loaded``'s tokenizer turns into at most ``tokens`` tokens
    (exactly that many for MiniLM's word-level vocabulary on these common words)."""
    from attention_explorer.pretrained import ModelError

    words: list[str] = []
    while True:
        candidate = " ".join([*words, WORDS[len(words) % len(WORDS)]])
        try:
            too_long = len(loaded.tokenize(candidate).ids) > tokens
        except ModelError:  # past the model's positions
            too_long = True
        if too_long:
            return " ".join(words)
        words.append(WORDS[len(words) % len(WORDS)])


def median_ms(work, repeat: int) -> float:
    """Median milliseconds of ``repeat`` calls of ``work`` after one warm-up call."""
    work()
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def paired_ms(first, second, repeat: int, block: int = 5) -> tuple[float, float]:
    """Median milliseconds of ``first`` and ``second``, timed in alternating blocks of
    ``block`` calls, so that a busy machine slows both alike. Blocks, not single calls: each
    library's idle threads spin for a while after its last product (OpenBLAS's and torch's
    OpenMP's) and slowed the other's very next call by up to 2x on 2 cores; a block's median
    leaves that first call out."""
    first(), second()
    a: list[float] = []
    b: list[float] = []
    while len(a) < max(1, repeat):
        for work, times in ((first, a), (second, b)):
            for _ in range(block):
                start = time.perf_counter()
                work()
                times.append(time.perf_counter() - start)
    return statistics.median(a) * 1000, statistics.median(b) * 1000


def _transformers_runner(folder, dtype: str, device: str = "cpu"):
    """A function running transformers' eager model on ids on ``device`` (waiting for a GPU
    to finish), or None without torch."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    model = transformers.AutoModel.from_pretrained(
        str(folder), attn_implementation="eager", dtype=getattr(torch, dtype)
    ).eval()
    model.to(device)

    def run(ids):
        with torch.no_grad():
            tokens = torch.tensor([ids], device=device)
            model(input_ids=tokens, output_attentions=True, output_hidden_states=True)
        if device != "cpu":
            torch.cuda.synchronize(device)

    return run


@contextlib.contextmanager
def torch_threads(count: int):
    """torch limited to ``count`` intra-op threads, restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_rows(loaded, tokens: int, repeat: int, use_torch: bool, device="cpu") -> list[tuple]:
    """(label, ours ms, transformers ms or None) for the model run at ``tokens`` tokens; on
    torch (ours and transformers') on ``device``."""
    from attention_explorer.pretrained import model_run

    text = text_of(loaded, tokens)
    ids = list(loaded.tokenize(text).ids)
    rows = []
    where = "torch" if device == "cpu" else f"torch:{device}"
    for dtype in ("float32", "float64"):
        mine = lambda d=dtype, t=None: model_run(loaded, text, dtype=d, threads=t)  # noqa: E731
        runner = _transformers_runner(loaded.folder, dtype, device) if use_torch else None
        label = f"model run {dtype}, {len(ids)} tokens"
        if runner is None:
            rows.append((label, median_ms(mine, repeat), None))
            continue
        theirs = lambda r=runner: r(ids)  # noqa: E731
        on_torch = lambda d=dtype: model_run(loaded, text, dtype=d, backend=where)  # noqa: E731
        if device == "cpu":
            rows.append((f"{label}, default threads", *paired_ms(mine, theirs, repeat)))
        torch_row = f"  ours on {where}, {dtype}, {len(ids)} tokens"
        rows.append((torch_row, *paired_ms(on_torch, theirs, repeat)))
        if dtype == "float32" and device == "cpu":  # the window's run beside transformers
            alone = lambda m=mine: m("float32", 1)  # noqa: E731
            with torch_threads(1):
                rows.append(
                    (f"  both on 1 thread, {len(ids)} tokens", *paired_ms(alone, theirs, repeat))
                )
    return rows


def edit_rows(loaded, tokens: int, repeat: int) -> list[tuple]:
    """(label, ms, None): an edit in the first and the last layer, recomputed with reuse."""
    from attention_explorer.pretrained import from_model, model_run

    text = text_of(loaded, tokens)
    base = model_run(loaded, text)
    rows = []
    for layer in (0, loaded.weights.n_layers - 1):
        session = from_model(loaded, text, layer=layer)
        W_Q = np.array(session.inputs.W_Q)  # [d, h*d_k]
        W_Q[0, 0] += 1.0
        edits = {layer: session.with_changes(inputs=replace(session.inputs, W_Q=W_Q))}
        ms = median_ms(lambda e=edits: model_run(loaded, text, edits=e, reuse=base), repeat)
        rows.append((f"edit in layer {layer}, recompute, {len(base.ids)} tokens", ms, None))
    return rows


def sweep_row(loaded, tokens: int) -> tuple:
    """(label, ms, None) for the knockout sweep, with the estimate in the label."""
    from attention_explorer.pretrained.sweep import run_sweep, sweep_estimate

    text = text_of(loaded, tokens)
    estimate = sweep_estimate(loaded, text)
    result = run_sweep(loaded, text)
    heads = result.changes.size
    n = len(result.tokens)
    return (
        f"sweep, {heads} heads, {n} tokens (estimate {estimate:.2f} s)",
        result.seconds * 1000,
        None,
    )


def window_rows(model: str, loaded, tokens: int, layer: int, repeat: int) -> list[tuple]:
    """(label, ms, None): edit in ``layer`` → new output shown in the real window (offscreen),
    median and 95th percentile; no rows without PySide6."""
    try:
        from attention_explorer.diagnostics import window_model_bench as model_run_bench
    except ImportError:
        return []
    text = text_of(loaded, tokens)
    n = len(loaded.tokenize(text).ids)
    layer = min(layer, loaded.weights.n_layers - 1)
    times = model_run_bench.edit_to_output_ms(model, text, layer, repeat)
    median, p95 = model_run_bench.summary(times)
    label = f"window: edit in layer {layer} -> shown, {n} tokens"
    return [(f"{label}, median", median, None), (f"{label}, p95", p95, None)]


def table(rows: list[tuple]) -> str:
    """The printed table: ours, transformers and their ratio per row."""
    head = f"{'what':<52} {'ours':>10} {'transformers':>13} {'ratio':>6}"
    lines = [head, "-" * len(head)]
    for label, ours, theirs in rows:
        other = f"{theirs:>10.1f} ms" if theirs else f"{'-':>13}"
        ratio = f"{ours / theirs:>6.2f}" if theirs else f"{'-':>6}"
        lines.append(f"{label:<52} {ours:>7.1f} ms {other} {ratio}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--tokens", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--repeat", type=int, default=10, help="warm repeats per row")
    parser.add_argument("--sweep-tokens", type=int, default=16)
    parser.add_argument("--no-torch", action="store_true", help="skip transformers' rows")
    parser.add_argument(
        "--device", default="cpu", help="torch's device for both runs on torch, e.g. cuda"
    )
    parser.add_argument("--no-window", action="store_true", help="skip the window's rows")
    parser.add_argument("--window-layer", type=int, default=3, help="layer edited in the window")
    args = parser.parse_args(argv)
    from attention_explorer.diagnostics.calibration import calibration_line
    from attention_explorer.pretrained import load_model

    loaded = load_model(args.model)
    w = loaded.weights
    print(
        f"{loaded.name}: {w.n_layers} layers x {w.heads} heads, d_model {w.d_model}, "
        f"{os.cpu_count()} CPU cores; medians of {args.repeat} warm runs"
    )
    print(calibration_line())
    rows = []
    for tokens in args.tokens:
        rows += run_rows(loaded, tokens, args.repeat, not args.no_torch, args.device)
    rows += edit_rows(loaded, args.tokens[0], args.repeat)
    if not args.no_window:
        rows += window_rows(args.model, loaded, args.tokens[0], args.window_layer, args.repeat)
    rows.append(sweep_row(loaded, args.sweep_tokens))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
