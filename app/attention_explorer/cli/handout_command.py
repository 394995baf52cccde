"""``attention-explorer handout``: the walkthrough of a session as a PDF, one page per step.

    attention-explorer handout --example minilm-it-cat --out walk.pdf
    attention-explorer handout SESSION.json --out walk.pdf --head 2 --query cat

The steps follow what the window's walkthrough follows on opening (the example's own query
and key, or the informative query), through the same rule; ``--head`` and ``--query`` choose
them as the learner would in the window (a query by position or by token name).
"""

from __future__ import annotations

import argparse

#: The handout's own options (parsers.py adds them to the command).
HANDOUT_ARGUMENTS = (
    (("--out",), {"required": True, "metavar": "FILE.pdf", "help": "the PDF to write"}),
    (
        ("--head",),
        {"type": int, "default": None, "help": "the head to follow (default: as the window)"},
    ),
    (
        ("--query",),
        {
            "default": None,
            "metavar": "ROW_OR_TOKEN",
            "help": "the query to follow: a row number or a token (default: as the window)",
        },
    ),
)


def followed(trace, head: int | None, query: str | None):
    """The Followed of the walkthrough for ``--head`` and ``--query`` (None: as the window);
    a head or query the session does not have is a UsageError naming what it has."""
    from attention_explorer.cli.commands import UsageError as HandoutChoiceError
    from attention_explorer.walkthrough.follow import Followed

    follow = Followed().on_tokens(trace.tokens)
    if head is not None:
        heads = trace.config.heads
        if not 0 <= head < heads:
            raise HandoutChoiceError(f"--head {head}: this session has heads 0 to {heads - 1}")
        follow = follow.with_head(head)
    if query is not None:
        tokens = list(trace.tokens)
        text = str(query).strip()
        if text.lstrip("-").isdigit():
            row = int(text)
            if not 0 <= row < len(tokens):
                raise HandoutChoiceError(
                    f"--query {row}: this session has query rows 0 to {len(tokens) - 1}"
                )
        elif text in tokens:
            row = tokens.index(text)
        else:
            shown = ", ".join(tokens[:12]) + (" …" if len(tokens) > 12 else "")
            raise HandoutChoiceError(f"--query {text!r} is not a token here: {shown}")
        follow = follow.with_query(row, tokens)
    return follow


def cmd_handout(args: argparse.Namespace) -> int:
    """Compute the session, build its walkthrough and write the handout; print the path."""
    from attention_explorer.cli.commands import load_source, run_engine
    from attention_explorer.exporting.handout import export_handout
    from attention_explorer.walkthrough.follow import session_steps

    data = load_source(args)
    trace = run_engine(data, args)
    follow = followed(trace, getattr(args, "head", None), getattr(args, "query", None))
    steps, _ = session_steps(trace, data, follow)
    path = export_handout(trace, steps, args.out, name=data.name)
    print(f"wrote {path} ({len(steps)} pages)")
    return 0
