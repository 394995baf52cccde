"""``attention-explorer sweep``: which heads matter? Knock out each head in turn.

    attention-explorer sweep MODEL --text "…" --out sweep.csv|npy|png|svg|pdf
        [--measure auto|logprob|similarity] [--target TOKEN] [--position N] [--other TEXT]

Prints how long it should take before starting, then the heads that change the measure most.
The CSV has one row per layer (``layer,head 0,head 1,…``); the .npy holds ``[layers, heads]``;
a picture is the layers × heads map drawn as every heatmap is (a signed map, 0 in the middle).
Errors are reported by the CLI's one error path (one line, exit code 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attention_explorer.cli.terminal_text import counted

#: How many of the strongest heads the summary names.
SHOWN = 5
#: The files --out may name.
SUFFIXES = (".csv", ".npy", ".png", ".svg", ".pdf")


def add_sweep_parser(sub) -> None:
    """The ``sweep`` sub-command's arguments."""
    p = sub.add_parser(
        "sweep",
        help="knock out each head of a real model in turn and measure the change",
        description="Knock out each head (it contributes nothing to concat·W_O), run the "
        "model to its output, and write the change in a measure per layer and head.",
    )
    p.add_argument("model", metavar="MODEL", help="a model folder or id (e.g. all-MiniLM-L6-v2)")
    p.add_argument("--text", required=True, help="the text the model reads")
    p.add_argument(
        "--out", required=True, metavar="SWEEP.csv|npy|png|svg|pdf", help="where to write it"
    )
    p.add_argument("--measure", choices=("auto", "logprob", "similarity"), default="auto")
    p.add_argument("--target", help="logprob: the target token (default: the text's next one)")
    p.add_argument("--position", type=int, help="logprob: the position predicting it")
    p.add_argument("--other", help="similarity: a second text to compare the embedding with")
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")


def _usage(message: str) -> Exception:
    from attention_explorer.cli.commands import UsageError

    return UsageError(message)


def _target(text: str | None):
    return int(text) if text is not None and text.isdigit() else text


def write_sweep(changes, path: Path, label: str = "change") -> Path:
    """Write ``changes [layers, heads]`` as .csv, .npy or a picture of the map (titled by
    ``label``, the measure), whole or not at all (through the app's one write path,
    ``writing/atomic.py``, and its output policy)."""
    import io

    import numpy as np

    from attention_explorer.writing.atomic import write_bytes_atomic

    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise _usage(f"--out must end in {', '.join(SUFFIXES)}, not {path.name!r}")
    if suffix in (".png", ".svg", ".pdf"):
        return _write_map(changes, path, label)
    if suffix == ".npy":
        buffer = io.BytesIO()
        np.save(buffer, changes)
        data = buffer.getvalue()
    else:
        header = ",".join(["layer", *(f"head {h}" for h in range(changes.shape[1]))])
        rows = [header] + [
            ",".join([str(i), *(repr(float(v)) for v in row)]) for i, row in enumerate(changes)
        ]
        data = ("\n".join(rows) + "\n").encode("utf-8")
    return write_bytes_atomic(path, data)


def cmd_sweep(args: argparse.Namespace) -> int:
    """Estimate, sweep, write, and print the strongest heads."""
    import numpy as np

    from attention_explorer.pretrained.checkpoint.text_limits import check_text_length
    from attention_explorer.pretrained.open_model import load_model
    from attention_explorer.pretrained.sweep import run_sweep, sweep_estimate
    from attention_explorer.writing.output_policy import check_output

    out = Path(args.out).expanduser()
    if out.suffix.lower() not in SUFFIXES:
        raise _usage(f"--out must end in {', '.join(SUFFIXES)}, not {out.name!r}")
    if not out.parent.is_dir():
        raise _usage(f"the folder {out.parent} does not exist")
    check_output(out)  # refused before the model is loaded, as model and compute do
    check_text_length(args.model, args.text)  # before reading or tokenizing anything
    loaded = load_model(args.model)
    w = loaded.weights
    seconds = sweep_estimate(loaded, args.text, dtype=args.dtype)
    print(
        f"knocking out {counted(w.n_layers * w.heads, 'head')} one by one: about {seconds:.1f} s",
        file=sys.stderr,
        flush=True,
    )
    result = run_sweep(
        loaded,
        args.text,
        args.measure,
        _target(args.target),
        args.position,
        args.other,
        dtype=args.dtype,
    )
    write_sweep(result.changes, out, f"change in the {result.label} when each head is knocked out")
    print(
        f"wrote {out}: {counted(w.n_layers, 'layer')} x {counted(w.heads, 'head')}, change in the "
        f"{result.label} "
        f"(unchanged: {result.baseline:.4f}), {result.seconds:.1f} s"
    )
    order = np.argsort(-np.abs(result.changes), axis=None, kind="stable")[:SHOWN]
    for flat in order:
        layer, head = divmod(int(flat), w.heads)
        print(f"  layer {layer} head {head}: {result.changes[layer, head]:+.4f}")
    return 0


def _write_map(changes, path: Path, label: str) -> Path:
    """The layers × heads map as a picture, through the path every heatmap export takes."""
    from attention_explorer.exporting.arrays import export_array
    from attention_explorer.exporting.qt_app import ensure_gui_app

    ensure_gui_app()
    layers, heads = changes.shape
    rows, cols = [f"layer {i}" for i in range(layers)], [f"head {h}" for h in range(heads)]
    return export_array(changes, "signed", label, rows, cols, path, axes=("layer", "head"))
