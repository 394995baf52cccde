"""``attention-explorer model``: one layer of a real model as a session file, or a summary.

    attention-explorer model --model DIR_OR_ID --text "…" [--layer L] [--out session.json]

Without ``--out`` it prints the tokens and, for every head of the layer, the key each token
attends to most. Errors are reported by the CLI's one error path (one line, exit code 2).
"""

from __future__ import annotations

import argparse

#: The summary shows at most this many queries per head (the file has every number).
SHOWN_QUERIES = 16


def summary_lines(session, weights) -> list[str]:
    """The printed summary: the model, the tokens, and each head's strongest key per token.

    ``weights`` is ``[heads, n, n]``.
    """
    tokens = session.tokens
    lines = [
        f"{session.name}: {len(tokens)} tokens, {session.config.heads} heads, "
        f"d_model {session.config.d_model}, mask {session.config.mask}",
        "tokens: " + " ".join(f"{i}:{t}" for i, t in enumerate(tokens)),
        "strongest key per query (head: query->key weight ...):",
    ]
    for head, rows in enumerate(weights):  # rows [n, n]
        best = rows[:SHOWN_QUERIES].argmax(axis=1)  # [min(n, 16)]
        parts = [f"{tokens[i]}->{tokens[j]} {rows[i, j]:.2f}" for i, j in enumerate(best)]
        lines.append(f"  head {head}: " + ", ".join(parts))
    if len(tokens) > SHOWN_QUERIES:
        lines.append(
            f"(the first {SHOWN_QUERIES} of {len(tokens)} queries; --out writes every number)"
        )
    return lines


def cmd_model(args: argparse.Namespace) -> int:
    """Load the layer; write it with --out, else print the summary."""
    from attention_explorer import api
    from attention_explorer.session.compute_session import resolve_backend

    backend = resolve_backend(args.backend, args.device)
    if args.out:
        from attention_explorer.writing.output_policy import check_output

        check_output(args.out)  # refused before the model is loaded
    session = api.from_model(args.model, args.text, layer=args.layer, backend=backend)
    if args.out:
        path = api.save(session, args.out)
        print(f"wrote {path}: {session.name}, {len(session.tokens)} tokens")
        return 0
    trace = api.compute(session, backend, dtype="float64")
    print("\n".join(summary_lines(session, trace["weights"])))
    return 0
