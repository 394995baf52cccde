"""Command line: launch the window (default), or compute / explain / export / list examples.

    attention-explorer [SESSION.json]            open the window
    attention-explorer compute SESSION.json      print a summary, or --out trace.npz
    attention-explorer explain SESSION.json --stage weights --head 0 --cell 1,2
    attention-explorer export SESSION.json --stage weights --head all --format png --out DIR
    attention-explorer examples                  list the worked examples
    attention-explorer --self-test | --version

Errors print one line and exit with code 2; no tracebacks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from attention_explorer import __version__

PROG = "attention-explorer"
COMMANDS = ("compute", "explain", "export", "examples")


class UsageError(Exception):
    """A problem with what the user asked for, reported as one line with exit code 2."""


def _fail(command: str, message: str) -> int:
    print(f"{PROG} {command}: error: {message}", file=sys.stderr)
    return 2


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """--backend/--device/--dtype, shared by the commands that run the engine."""
    parser.add_argument("--backend", choices=("numpy", "torch"), default="numpy")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (torch only)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")


def load_source(args: argparse.Namespace):
    """The SessionData named by ``args.session`` or ``args.example``."""
    from attention_explorer.session import load_session

    if getattr(args, "example", None):
        from attention_explorer.session.examples import load_example

        return load_example(args.example)
    if not getattr(args, "session", None):
        raise UsageError("give a session file or --example NAME")
    return load_session(args.session)


def run_engine(data, args: argparse.Namespace, **kwargs):
    """Compute ``data`` with the backend options in ``args``."""
    from attention_explorer.engine import Backend, compute

    device = args.device
    if args.backend == "torch" and device == "cuda":
        device = "cuda:0"
    backend = Backend(args.backend, device if args.backend == "torch" else "cpu")
    return compute(
        data.inputs, data.config, backend=backend, dtype=args.dtype,
        tokens=data.tokens, kv_tokens=data.kv_tokens or None, **kwargs,
    )  # fmt: skip


def _summary(trace, data) -> str:
    import numpy as np

    from attention_explorer.engine.explain import format_number

    lines = [
        f"{data.name}: {trace.n_queries} queries x {trace.n_keys} keys, "
        f"{trace.config.heads} head(s), d_k {trace.config.head_dim}, mask {trace.config.mask}, "
        f"{trace.config.normalizer}, {trace.backend.label} {trace.dtype}",
    ]
    lines += [f"note: {note}" for note in trace.notes]
    if trace.fully_masked_rows:
        lines.append(f"fully masked rows (weights 0): {list(trace.fully_masked_rows)}")
    width = max(len(t) for t in trace.kv_tokens) + 1
    for head in trace.heads:
        weights = trace.stage("weights", head)
        lines.append(f"\nweights, head {head} (rows: queries, columns: keys)")
        lines.append(" " * width + " ".join(f"{t:>9.9}" for t in trace.kv_tokens))
        for label, row in zip(trace.tokens, weights):
            cells = " ".join(f"{format_number(x):>9}" for x in row)
            lines.append(f"{label:<{width}.{width}}{cells}")
    if trace.has("output"):
        out = trace["output"]
        lines.append(f"\noutput {out.shape[0]}x{out.shape[1]}: row sums "
                     f"{[format_number(x) for x in np.sum(out, axis=1)]}")  # fmt: skip
    return "\n".join(lines)


def cmd_compute(args: argparse.Namespace) -> int:
    """Run the engine on a session; print a summary or write every stage to an NPZ."""
    import numpy as np

    data = load_source(args)
    trace = run_engine(data, args)
    if args.out:
        from attention_explorer.export import export_trace_npz

        path = export_trace_npz(trace, args.out)
        print(f"wrote {path}")
        return 0
    print(_summary(trace, data))
    del np
    return 0


def _cell(text: str) -> tuple[int, int]:
    try:
        i, j = (int(p) for p in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected ROW,COL such as 1,2, got {text!r}") from None
    return i, j


def cmd_explain(args: argparse.Namespace) -> int:
    """Print the arithmetic behind one cell."""
    from attention_explorer.engine import explain

    data = load_source(args)
    trace = run_engine(data, args)
    i, j = args.cell
    if not 0 <= args.head < trace.config.heads:
        raise UsageError(f"head {args.head} is not 0..{trace.config.heads - 1}")
    if not trace.has(args.stage):
        raise UsageError(f"stage {args.stage!r} is not part of this session")
    try:
        print(explain(trace, args.stage, args.head, i, j, max_terms=args.max_terms).text())
    except IndexError as exc:
        raise UsageError(str(exc)) from None
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    """List the worked examples."""
    from attention_explorer.session.examples import list_examples

    for example in list_examples():
        print(f"{example.key:<28} {example.title}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser for the sub-commands (compute, explain, export, examples)."""
    from attention_explorer.engine import ALL_STAGES

    parser = argparse.ArgumentParser(prog=PROG, description="Attention Explorer command line")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("compute", help="run the engine on a session file")
    p.add_argument("session", nargs="?")
    p.add_argument("--example", help="a worked example's name instead of a file")
    p.add_argument("--out", help="write every stage to this .npz file")
    add_engine_options(p)
    p.set_defaults(func=cmd_compute)

    p = sub.add_parser("explain", help="print the arithmetic behind one cell")
    p.add_argument("session", nargs="?")
    p.add_argument("--example", help="a worked example's name instead of a file")
    p.add_argument("--stage", default="weights", choices=[s for s in ALL_STAGES if s != "X_kv"])
    p.add_argument("--head", type=int, default=0)
    p.add_argument("--cell", type=_cell, default=(0, 0), help="ROW,COL, e.g. 1,2")
    p.add_argument("--max-terms", type=int, default=16)
    add_engine_options(p)
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("examples", help="list the worked examples")
    p.set_defaults(func=cmd_examples)

    try:
        from attention_explorer.export.command import add_export_parser
    except ImportError:  # pragma: no cover - the export module is part of the package
        pass
    else:
        add_export_parser(sub)
    return parser


def build_gui_parser() -> argparse.ArgumentParser:
    """The parser for launching the window."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="See and edit every stage of self-attention. "
        f"Commands: {', '.join(COMMANDS)} (try '{PROG} compute --help').",
    )
    parser.add_argument("session", nargs="?", help="a session .json file to open")
    parser.add_argument("--example", help="open a worked example by name")
    parser.add_argument("--self-test", action="store_true", help="check the install and exit")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``attention-explorer`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        parser = build_parser()
        args = parser.parse_args(argv)
        return _dispatch(args.command, args)
    args = build_gui_parser().parse_args(argv)
    if args.self_test:
        from attention_explorer.self_test import run_self_test

        return run_self_test()
    from attention_explorer.ui.app import run_app

    return run_app(session_path=args.session, example=args.example)


def _dispatch(command: str, args: argparse.Namespace) -> int:
    from attention_explorer.engine import AttentionInputError
    from attention_explorer.session import SessionFileError

    try:
        return args.func(args)
    except (UsageError, AttentionInputError, SessionFileError) as exc:
        return _fail(command, str(exc))
    except KeyError as exc:
        return _fail(command, str(exc.args[0]) if exc.args else "not found")
    except OSError as exc:
        return _fail(command, f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
