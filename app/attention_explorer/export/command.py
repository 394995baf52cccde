"""``attention-explorer export``: pictures and numbers from the command line, with no display.

    attention-explorer export SESSION.json --stage weights --head all --format png,svg,csv --out DIR
    attention-explorer export --example NAME --stage all --format png --out DIR

Errors print one line (``attention-explorer export: error: ...``) and return exit code 2; no
half-written file is left behind. Heavy imports (numpy, Qt, the engine) happen only when the
command runs, so building the parser stays cheap.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

PROG = "attention-explorer export"


def add_export_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``export`` sub-command to an argparse ``subparsers`` object; return its parser.

    The parser's ``func`` default is :func:`run_export`.
    """
    p = subparsers.add_parser(
        "export",
        help="write pictures (png, svg, pdf) and numbers (csv, npy, npz) of a session",
        description="Write pictures and numbers of any stage and head, with no display needed. "
        "Files are named predictably: weights_head0.png, weights_grid.png (all heads), "
        "concat.png, output.csv, trace.npz.",
    )
    p.add_argument("session", nargs="?", help="a session .json file")
    p.add_argument("--example", metavar="NAME", help="a worked example's name instead of a file")
    p.add_argument("--stage", default="weights",
                   help="a stage, a comma list, or 'all' (default weights): X, Q, K, V, scores, "
                   "scaled, mask, masked, weights, head_outputs, concat, output")  # fmt: skip
    p.add_argument("--head", default="all", help="a head, a comma list such as 0,2, or 'all'")
    p.add_argument("--format", default="png",
                   help="comma list of png, svg, pdf, csv, npy, npz (default png)")  # fmt: skip
    p.add_argument("--out", default=".", metavar="DIR",
                   help="folder to write into (its last part is created if missing)")  # fmt: skip
    p.add_argument("--size", default="1200x900", help="picture size in pixels, WxH")
    p.add_argument("--dpi", default="150", help="picture resolution (default 150)")
    p.add_argument("--cmap", default=None,
                   help="colour map, e.g. viridis, magma, CET-D1 (default: viridis; "
                   "CET-D1 for scores)")  # fmt: skip
    p.add_argument("--values", action=argparse.BooleanOptionalAction, default=None,
                   help="write the numbers in the cells (default: up to 16x16)")  # fmt: skip
    p.add_argument("--grid", action=argparse.BooleanOptionalAction, default=None,
                   help="also draw all heads in one picture, <stage>_grid.png "
                   "(default: when more than one head)")  # fmt: skip
    p.add_argument("--backend", default="numpy", help="numpy (default) or torch")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (torch only)")
    p.add_argument("--dtype", default="float32", help="float32 (default) or float64")
    p.set_defaults(func=run_export)
    return p


def _heads(text: str):
    from attention_explorer.export.errors import ExportError

    if text.strip().lower() == "all":
        return "all"
    try:
        heads = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ExportError(
            f"--head must be 'all' or whole numbers such as 0,2; got {text!r}"
        ) from None
    if not heads:
        raise ExportError("--head is empty; give 'all' or numbers such as 0,2")
    return heads


def _dpi(text: str) -> float:
    from attention_explorer.export.errors import ExportError

    try:
        return float(text)
    except ValueError:
        raise ExportError(f"--dpi must be a number such as 150, got {text!r}") from None


def _load(args: argparse.Namespace):
    from attention_explorer.export.errors import ExportError

    if args.example and args.session:
        raise ExportError("give a session file or --example NAME, not both")
    if args.example:
        try:
            from attention_explorer.session.examples import load_example
        except ImportError:
            raise ExportError("worked examples are not available in this build") from None
        return load_example(args.example)
    if not args.session:
        raise ExportError("give a session file or --example NAME")
    from attention_explorer.session.file_format import load_session

    return load_session(args.session)


def _compute(data, args: argparse.Namespace):
    from attention_explorer.engine import Backend, compute

    device = args.device if args.backend == "torch" else "cpu"
    if device == "cuda":
        device = "cuda:0"
    return compute(
        data.inputs, data.config, backend=Backend(args.backend, device), dtype=args.dtype,
        tokens=data.tokens, kv_tokens=data.kv_tokens or None,
    )  # fmt: skip


def _out_folder(text: str) -> tuple[Path, bool]:
    """The output folder, created when only its last part is missing; (path, created)."""
    from attention_explorer.export.errors import ExportError

    folder = Path(text).expanduser()
    if folder.exists():
        return folder, False
    if not folder.parent.is_dir():
        raise ExportError(f"folder {folder.parent} does not exist")
    try:
        folder.mkdir()
    except OSError as exc:
        raise ExportError(f"cannot create folder {folder}: {exc.strerror or exc}") from None
    return folder, True


def _export(args: argparse.Namespace) -> int:
    from attention_explorer.export.api import export_all, plan_exports
    from attention_explorer.export.colors import lookup_table
    from attention_explorer.export.options import PICTURE_FORMATS, parse_formats, parse_size
    from attention_explorer.export.qt_app import ensure_gui_app

    formats = parse_formats(args.format)
    size, dpi = parse_size(args.size), _dpi(args.dpi)
    heads = _heads(args.head)
    pictures = any(fmt in PICTURE_FORMATS for fmt in formats)
    if pictures and args.cmap:
        lookup_table(args.cmap)
    data = _load(args)
    trace = _compute(data, args)
    plan_exports(trace, args.stage, heads, formats, args.grid)  # checks before any folder
    folder, created = _out_folder(args.out)
    try:
        if pictures:
            ensure_gui_app()
        written = export_all(
            trace, folder, formats, stages=args.stage, heads=heads, grid=args.grid,
            name=getattr(data, "name", None), cmap=args.cmap, show_values=args.values,
            size=size, dpi=dpi,
        )  # fmt: skip
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only succeeds when empty
        raise
    for path in written:
        print(path)
    return 0


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return str(exc.args[0]) if exc.args else "not found"
    if isinstance(exc, OSError):
        text = exc.strerror or str(exc)
        return f"{text}: {exc.filename}" if exc.filename else text
    return str(exc)


def run_export(args: argparse.Namespace) -> int:
    """Run the export sub-command; return 0, or 2 after printing a one-line error to stderr."""
    from attention_explorer.export.errors import ExportError

    try:
        return _export(args)
    except (ExportError, ValueError, OSError, KeyError, ImportError) as exc:
        message = " ".join(_message(exc).split()) or type(exc).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2


def main(argv=None) -> int:
    """Run ``export`` alone (``python -m attention_explorer.export.command ...``)."""
    parser = argparse.ArgumentParser(prog="attention-explorer")
    sub = parser.add_subparsers(dest="command")
    add_export_parser(sub)
    args = parser.parse_args(["export", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
