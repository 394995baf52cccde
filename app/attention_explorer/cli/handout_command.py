"""``attention-explorer handout``: the walkthrough of a session as a PDF, one page per step.

    attention-explorer handout --example minilm-it-cat --out walk.pdf
    attention-explorer handout SESSION.json --out walk.pdf

The steps follow what the window's walkthrough follows on opening (the example's own query
and key, or the informative query), through the same rule.
"""

from __future__ import annotations

import argparse


def cmd_handout(args: argparse.Namespace) -> int:
    """Compute the session, build its walkthrough and write the handout; print the path."""
    from attention_explorer.cli.commands import load_source, run_engine
    from attention_explorer.exporting.handout import export_handout
    from attention_explorer.walkthrough.follow import session_steps

    data = load_source(args)
    trace = run_engine(data, args)
    steps, _ = session_steps(trace, data)
    path = export_handout(trace, steps, args.out, name=data.name)
    print(f"wrote {path} ({len(steps)} pages)")
    return 0
