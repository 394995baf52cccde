"""``attention-explorer export``: pictures and numbers from the command line, with no display.

    attention-explorer export SESSION.json --stage weights --head all --format png,svg,csv --out DIR
    attention-explorer export --example NAME --stage all --format png --out DIR

Everything is checked before the output folder is made; a failure removes a folder it made
(the export library itself never leaves a half-written file).
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from attention_explorer.cli.commands import UsageError, load_source, run_engine


def _heads(text: str):
    """``all`` or a comma list of whole numbers."""
    if text.strip().lower() == "all":
        return "all"
    try:
        heads = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(
            f"--head must be 'all' or whole numbers such as 0,2; got {text!r}"
        ) from None
    if not heads:
        raise UsageError("--head is empty; give 'all' or numbers such as 0,2")
    return heads


def _dpi(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"--dpi must be a number such as 150, got {text!r}") from None


def _out_folder(text: str) -> tuple[Path, bool]:
    """The output folder, created when only its last part is missing; (path, created)."""
    folder = Path(text).expanduser()
    if folder.exists():
        if not folder.is_dir():
            raise UsageError(f"--out {folder} is a file, not a folder")
        return folder, False
    if not folder.parent.is_dir():
        raise UsageError(f"folder {folder.parent} does not exist")
    try:
        folder.mkdir()
    except OSError as exc:
        raise UsageError(f"cannot create folder {folder}: {exc.strerror or exc}") from None
    return folder, True


def cmd_export(args: argparse.Namespace) -> int:
    """Write the chosen stages, heads and formats into ``--out``; print each file written."""
    from attention_explorer.exporting.colors import lookup_table
    from attention_explorer.exporting.options import PICTURE_FORMATS, parse_formats, parse_size
    from attention_explorer.exporting.qt_app import ensure_gui_app
    from attention_explorer.exporting.stage_exports import export_all, plan_exports

    formats = parse_formats(args.format)
    size, dpi = parse_size(args.size), _dpi(args.dpi)
    heads = _heads(args.head)
    pictures = any(fmt in PICTURE_FORMATS for fmt in formats)
    if pictures and args.cmap:
        lookup_table(args.cmap)
    data = load_source(args)
    trace = run_engine(data, args)
    plan_exports(trace, args.stage, heads, formats, args.grid)  # checks before any folder
    folder, created = _out_folder(args.out)
    try:
        if pictures:
            ensure_gui_app()
        written = export_all(
            trace,
            folder,
            formats,
            stages=args.stage,
            heads=heads,
            grid=args.grid,
            name=data.name,
            cmap=args.cmap,
            show_values=args.values,
            size=size,
            dpi=dpi,
            decimals=args.decimals,
            scale=args.scale,
        )
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only succeeds when empty
        raise
    for path in written:
        print(path)
    return 0
