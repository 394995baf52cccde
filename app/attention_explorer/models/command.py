"""The ``model`` sub-command: one layer of a real model as a session file, or a summary.

    attention-explorer model --model DIR_OR_ID --text "…" [--layer L] [--out session.json]

Without ``--out`` it prints the tokens and, for every head of the layer, the key each token
attends to most. Errors print one line and exit with code 2.
"""

from __future__ import annotations

import argparse
import sys

PROG = "attention-explorer"


def add_model_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``model`` sub-command to an argparse ``subparsers`` object; return its parser.

    The parser's ``func`` default is :func:`run_model`.
    """
    p = subparsers.add_parser(
        "model",
        help="load one layer of a real pretrained model (BERT, MiniLM, GPT-2) as a session",
        description="Tokenize TEXT with the model's own tokenizer, run the model up to LAYER, "
        "and write that layer's attention (X, W_Q, W_K, W_V, W_O, biases) as an editable session "
        "file, or print which token each head attends to most.",
    )
    p.add_argument("--model", required=True, metavar="DIR_OR_ID",
                   help="a folder with config.json, model.safetensors, tokenizer.json, or a hub "
                   "id (e.g. all-MiniLM-L6-v2) found locally or downloaded")  # fmt: skip
    p.add_argument("--text", required=True, help="the sentence the model reads")
    p.add_argument("--layer", type=int, default=0, help="which layer, from 0 (default 0)")
    p.add_argument("--out", metavar="SESSION.json", help="write the session file here")
    p.add_argument("--backend", choices=("numpy", "torch"), default="numpy")
    p.add_argument("--device", default="cpu", help="cpu, cuda:N or mps (torch only)")
    p.set_defaults(func=run_model)
    return p


def summary_lines(session, weights) -> list[str]:
    """The printed summary: the model, the tokens, and each head's strongest key per token."""
    tokens = session.tokens
    lines = [
        f"{session.name}: {len(tokens)} tokens, {session.config.heads} heads, "
        f"d_model {session.config.d_model}, mask {session.config.mask}",
        "tokens: " + " ".join(f"{i}:{t}" for i, t in enumerate(tokens)),
        "strongest key per query (head: query->key weight ...):",
    ]
    for head, rows in enumerate(weights):  # rows [n, n]
        best = rows.argmax(axis=1)  # [n]
        parts = [f"{tokens[i]}->{tokens[j]} {rows[i, j]:.2f}" for i, j in enumerate(best)]
        lines.append(f"  head {head}: " + ", ".join(parts))
    return lines


def run_model(args: argparse.Namespace) -> int:
    """Run the model sub-command; return 0, or 2 after printing a one-line error to stderr."""
    from attention_explorer.engine import AttentionInputError, Backend, compute
    from attention_explorer.models import ModelError, from_model

    try:
        backend = Backend(args.backend, args.device if args.backend == "torch" else "cpu")
        session = from_model(args.model, args.text, layer=args.layer, backend=backend)
        if args.out:
            from attention_explorer.session.file_format import save_session

            path = save_session(args.out, session)
            print(f"wrote {path}: {session.name}, {len(session.tokens)} tokens")
            return 0
        trace = compute(session.inputs, session.config, dtype="float64", stages=("weights",))
        print("\n".join(summary_lines(session, trace.stages["weights"])))
        return 0
    except (ModelError, AttentionInputError) as exc:
        message = str(exc)
    except OSError as exc:
        message = f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
    print(f"{PROG} model: error: {message}", file=sys.stderr)
    return 2
