"""The sub-commands compute, explain and examples, written on the Python API.

Each takes the parsed arguments and returns an exit code; a problem is raised (UsageError,
AttentionInputError, SessionFileError, ExportError, KeyError) and printed as one line by
:func:`attention_explorer.cli.main`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_explorer import api
from attention_explorer.writing.output_policy import check_output


class UsageError(Exception):
    """A problem with what the user asked for, reported as one line with exit code 2."""


def load_source(args: argparse.Namespace):
    """The session named by ``args.session`` or ``args.example`` (not both, not neither)."""
    if args.example and args.session:
        raise UsageError("give a session file or --example NAME, not both")
    if args.example:
        return api.example(args.example)
    if not args.session:
        raise UsageError("give a session file or --example NAME")
    return api.load(args.session)


def run_engine(data, args: argparse.Namespace, **limits):
    """The trace of ``data`` with the --backend/--device/--dtype in ``args``."""
    return api.compute(data, args.backend, args.device, args.dtype, **limits)


def cmd_compute(args: argparse.Namespace) -> int:
    """Run the engine on a session; print a bounded summary or write every stage to an NPZ."""
    data = load_source(args)
    if args.out:
        from attention_explorer.exporting import export_trace_npz

        check_output(args.out)  # the output policy refuses before the engine runs
        if Path(args.out).expanduser().is_dir():
            raise UsageError(f"--out {args.out} is a folder; give a file such as trace.npz in it")
        print(f"wrote {export_trace_npz(run_engine(data, args), args.out)}")
        return 0
    from attention_explorer.cli.summary import summary

    trace = run_engine(data, args, stages=("weights", "output"))  # what the summary shows
    print(summary(trace, data.name))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    """Print the arithmetic behind one cell."""
    data = load_source(args)
    trace = run_engine(data, args)
    if not 0 <= args.head < trace.config.heads:
        raise UsageError(f"head {args.head} is not 0..{trace.config.heads - 1}")
    if not trace.has(args.stage):
        raise UsageError(f"stage {args.stage!r} is not part of this session")
    i, j = args.cell
    try:
        explanation = api.explain(trace, args.stage, args.head, i, j, max_terms=args.max_terms)
    except IndexError as exc:
        raise UsageError(str(exc)) from None
    print(explanation.text())
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    """List the starter and the worked examples: key and title, keys aligned."""
    from attention_explorer.cli.summary import plain

    found = api.examples()
    width = max(len(info.key) for info in found) + 2
    for info in found:
        print(f"{info.key:<{width}}{plain(info.title)}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the JSON Schema of session files (the same text as resources/session.schema.json)."""
    import json

    from attention_explorer.session.file_format import session_json_schema

    print(json.dumps(session_json_schema(), indent=1, sort_keys=True))
    return 0
