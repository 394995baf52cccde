"""``attention-explorer patch | lens | attribution``: ask a real model why (issue 29).

    attention-explorer patch MODEL --clean "…" --corrupted "…" --site resid_pre
        --answer TOKEN --wrong TOKEN --out patch.csv|npy|png|svg|pdf
    attention-explorer lens MODEL --text "…" --out lens.csv|npy|png|svg|pdf
    attention-explorer attribution MODEL --text "…" --target TOKEN [--distractor TOKEN]
        --out attribution.csv|npy|png|svg|pdf

A map (patching: layers × positions or layers × heads; attribution: layers × heads) is
written as every other array: a CSV with labelled rows and columns, the .npy of its values,
or a picture drawn as the window draws a signed map (:func:`exporting.arrays.export_array`).
The lens writes its full log-probabilities ``[layers + 1, positions, vocab]`` as .npy, the ten
best tokens and their probabilities at each cell as CSV (one row per cell), and the best
token's probability (layers × positions) as a picture. The output is checked (suffix, folder,
the output policy) before the model runs. Errors are the CLI's one line, exit code 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

#: The files --out may name.
SUFFIXES = (".csv", ".npy", ".png", ".svg", ".pdf")
#: How many of the strongest cells a summary names.
SHOWN = 5
#: The best tokens each lens CSV row lists.
LENS_TOP = 10
_SITES = ("resid_pre", "attn_out", "head_out", "pattern")


def _common(p: argparse.ArgumentParser, out: str) -> None:
    p.add_argument("model", metavar="MODEL", help="a model folder or id (e.g. gpt2)")
    p.add_argument("--out", required=True, metavar=out, help="where to write it")
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--backend", choices=("numpy", "torch"), default="numpy")


def add_causal_parsers(sub) -> None:
    """The ``patch``, ``lens`` and ``attribution`` sub-commands' arguments."""
    p = sub.add_parser(
        "patch",
        help="activation patching: which activations carry the answer from one prompt",
        description="Copy each activation of SITE from the clean prompt's run into the "
        "corrupted prompt's run and write the share of logit[ANSWER] − logit[WRONG] at the "
        "last position it restores (1: all of it, 0: none).",
    )
    _common(p, "PATCH.csv|npy|png|svg|pdf")
    p.add_argument("--clean", required=True, help="the prompt whose answer is right")
    p.add_argument("--corrupted", required=True, help="a prompt of as many tokens")
    p.add_argument("--site", choices=_SITES, default="resid_pre")
    p.add_argument("--answer", required=True, help="the clean answer (a token or an id)")
    p.add_argument("--wrong", required=True, help="the token it competes with")
    p = sub.add_parser(
        "lens",
        help="the logit lens: what the model would predict after each layer",
        description="Read the residual after the embeddings and after each layer through "
        "the final norm and the unembedding, and write the predictions.",
    )
    _common(p, "LENS.csv|npy|png|svg|pdf")
    p.add_argument("--text", required=True, help="the text the model reads")
    p = sub.add_parser(
        "attribution",
        help="each head's direct effect on a token's logit at the last position",
        description="Each head's output through the final norm (its scale frozen) onto "
        "W_U[TARGET] (− W_U[DISTRACTOR]): layers × heads.",
    )
    _common(p, "ATTRIBUTION.csv|npy|png|svg|pdf")
    p.add_argument("--text", required=True, help="the text the model reads")
    p.add_argument("--target", required=True, help="the token (or id) whose logit to explain")
    p.add_argument("--distractor", help="a token (or id) to subtract")


def _usage(message: str) -> Exception:
    from attention_explorer.cli.commands import UsageError

    return UsageError(message)


def _token(text: str | None):
    """A token as typed: an id when it is all digits, else its text."""
    return int(text) if text is not None and text.isdigit() else text


def checked_out(text: str) -> Path:
    """``--out`` checked before any work: a known suffix, an existing folder and a file the
    output policy lets us write (not a folder, device or read-only file)."""
    from attention_explorer.writing.output_policy import OutputRefused, check_output

    out = Path(text).expanduser()
    if out.suffix.lower() not in SUFFIXES:
        raise _usage(f"--out must end in {', '.join(SUFFIXES)}, not {out.name!r}")
    if not out.parent.is_dir():
        raise _usage(f"the folder {out.parent} does not exist")
    try:
        check_output(out)
    except OutputRefused as exc:
        raise _usage(str(exc)) from None
    return out


def write_map(values, out: Path, title: str, rows, cols, axes, kind: str = "signed") -> Path:
    """A map ``[rows, cols]`` as CSV, .npy or a picture, through the one export path."""
    from attention_explorer.exporting.arrays import export_array

    if out.suffix.lower() in (".png", ".svg", ".pdf"):
        from attention_explorer.exporting.qt_app import ensure_gui_app

        ensure_gui_app()
    return export_array(values, kind, title, rows, cols, out, axes=axes)


def _strongest(values, rows, cols) -> list[str]:
    import numpy as np

    order = np.argsort(-np.abs(values), axis=None, kind="stable")[:SHOWN]
    lines = []
    for flat in order:
        i, j = divmod(int(flat), values.shape[1])
        lines.append(f"  {rows[i]}, {cols[j]}: {values[i, j]:+.4f}")
    return lines


def cmd_patch(args: argparse.Namespace) -> int:
    """Estimate, patch, write the map and print its strongest cells."""
    from attention_explorer.causal import check_patch, patch, patch_estimate

    out = checked_out(args.out)
    options = {"dtype": args.dtype, "backend": args.backend}
    pair = {"answer": _token(args.answer), "wrong": _token(args.wrong)}
    check_patch(args.model, args.clean, args.corrupted, site=args.site, **pair, **options)
    seconds = patch_estimate(args.model, args.clean, site=args.site, **options)
    print(f"patching {args.site}: about {seconds:.1f} s", file=sys.stderr, flush=True)
    result = patch(
        args.model,
        args.clean,
        args.corrupted,
        site=args.site,
        **pair,
        **options,
    )
    rows, cols = result.row_labels, result.col_labels
    write_map(result.values, out, result.label, rows, cols, result.axes)
    print(
        f"wrote {out}: {result.shape[0]} layers x {result.shape[1]} {result.axes[1]}s; "
        f"logit[{result.answer}] − logit[{result.wrong}] clean {result.clean_metric:.4f}, "
        f"corrupted {result.corrupted_metric:.4f}, {result.seconds:.1f} s"
    )
    for line in _strongest(result.values, rows, cols):
        print(line)
    return 0


def cmd_attribution(args: argparse.Namespace) -> int:
    """Attribute, write the map and print the strongest heads and the sum's check."""
    from attention_explorer.causal import head_attribution

    out = checked_out(args.out)
    result = head_attribution(
        args.model,
        args.text,
        target=_token(args.target),
        distractor=_token(args.distractor),
        dtype=args.dtype,
        backend=args.backend,
    )
    rows, cols = result.row_labels, result.col_labels
    write_map(result.values, out, result.label, rows, cols, result.axes)
    print(
        f"wrote {out}: {result.values.shape[0]} layers x {result.values.shape[1]} heads; the "
        f"heads add {result.values.sum():+.4f} of the logit difference {result.total:+.4f} "
        f"(embedding {result.embed:+.4f}, feed-forwards {result.mlp.sum():+.4f}, "
        f"biases {result.attn_bias.sum() + result.norm_bias + result.head_bias:+.4f})"
    )
    for line in _strongest(result.values, rows, cols):
        print(line)
    return 0


def lens_csv(result) -> bytes:
    """One CSV row per cell of the lens: the row, the position, its token, then the
    :data:`LENS_TOP` best tokens each with its probability (labels made CSV-safe)."""
    from attention_explorer.exporting.safe_text import csv_label

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    k = min(LENS_TOP, result.top_ids.shape[-1])
    header = ["row", "position", "token"]
    for i in range(1, k + 1):
        header += [f"top {i}", f"probability {i}"]
    writer.writerow(header)
    for r, row in enumerate(result.row_labels):
        for p, token in enumerate(result.tokens):
            cells = [row, str(p), csv_label(token)]
            for text, prob in zip(result.top_texts[r][p][:k], result.top_probs[r, p, :k]):
                cells += [csv_label(text), repr(float(prob))]
            writer.writerow(cells)
    return buffer.getvalue().encode("utf-8")


def cmd_lens(args: argparse.Namespace) -> int:
    """Run the lens, write it, and print the best token after each layer at the last
    position."""
    import numpy as np

    from attention_explorer.causal import logit_lens
    from attention_explorer.writing.atomic import write_bytes_atomic

    out = checked_out(args.out)
    result = logit_lens(args.model, args.text, dtype=args.dtype, backend=args.backend)
    suffix = out.suffix.lower()
    if suffix == ".npy":
        buffer = io.BytesIO()
        np.save(buffer, result.log_probs, allow_pickle=False)
        write_bytes_atomic(out, buffer.getvalue())
    elif suffix == ".csv":
        write_bytes_atomic(out, lens_csv(result))
    else:
        title = "logit lens: probability of the best token after each layer"
        write_map(
            result.top_prob,
            out,
            title,
            result.row_labels,
            result.col_labels,
            ("layer", "position"),
            kind="unit",
        )
    rows, n, vocab = result.log_probs.shape
    print(f"wrote {out}: {rows} rows (embeddings and {rows - 1} layers) x {n} positions")
    last = n - 1
    for r, label in enumerate(result.row_labels):
        text, prob = result.top_texts[r][last][0], result.top_probs[r, last, 0]
        print(f"  {label}: {text!r} {prob:.3f}")
    return 0
