"""The export functions the GUI and the command line call: pictures, numbers, 'export all'."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from attention_explorer.engine.trace import Trace
from attention_explorer.exporting.figure import Figure, Look, grid_figure, stage_figure
from attention_explorer.exporting.numbers import export_numbers, export_trace_npz
from attention_explorer.exporting.options import (
    DATA_FORMATS,
    DEFAULT_DPI,
    DEFAULT_SIZE,
    PICTURE_FORMATS,
    check_size,
    parse_formats,
)
from attention_explorer.exporting.stages import (
    computed_stages,
    file_stem,
    is_per_head,
    is_signed,
    resolve_heads,
    resolve_stage,
)
from attention_explorer.writing.atomic import check_folder, write_bytes_atomic
from attention_explorer.writing.export_errors import ExportError
from attention_explorer.writing.transaction import FileSet


def _format(path: Path, fmt: str | None, allowed: tuple[str, ...]) -> str:
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if not fmt:
        raise ExportError(f"{path.name!r} has no suffix; add .png, .svg or .pdf or give a format")
    if fmt not in allowed:
        raise ExportError(f"unknown format {fmt!r}; choose from {', '.join(allowed)}")
    return fmt


#: The picture keywords the export functions take besides the :class:`Look` ones.
_OWN_KEYWORDS = ("size", "dpi")


def _write_picture(path: Path, fig: Figure, fmt: str, size: tuple[int, int], dpi: float) -> Path:
    from attention_explorer.exporting.targets import picture_bytes

    return write_bytes_atomic(path, picture_bytes(fig, fmt, size, dpi))


def render_stage_image(
    trace: Trace,
    stage: str,
    head: int | None = None,
    *,
    size: tuple[int, int] = DEFAULT_SIZE,
    dpi: float = DEFAULT_DPI,
    **look,
):
    """The finished picture of one stage and head as a QImage (e.g. for the clipboard).

    ``look``: ``title``, ``name``, ``cmap``, ``show_values``, ``decimals``, ``scale``, as
    :func:`export_stage`.
    """
    from attention_explorer.exporting.targets import render_image

    return render_image(stage_figure(trace, stage, head, **look), size, dpi)


def export_stage(
    trace: Trace,
    stage: str,
    head: int | None,
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    size: tuple[int, int] = DEFAULT_SIZE,
    dpi: float = DEFAULT_DPI,
    **look,
) -> Path:
    """Write one stage and head as a picture (png, svg, pdf) or its numbers (csv, npy).

    ``fmt`` defaults to the suffix of ``path``. ``head`` is ignored for shared stages
    (concat, output, X, mask). ``size`` is (width, height) in pixels; ``dpi`` sets the
    physical size (and the page size of a PDF). The ``look`` keywords (see
    :class:`~attention_explorer.exporting.figure.Look`): ``title`` replaces the default title,
    which names the stage, the head and ``name`` (the example or session). ``cmap`` is a
    colour map name (see :func:`colormap_names`; default viridis, or CET-D1 for signed
    scores). ``show_values`` writes the numbers in the cells (None: only up to 16x16).
    ``decimals`` is how many decimals the cell numbers get (default: the window's digits,
    with "≈0" for tiny values); ``scale`` is the weights' colour scale ("linear", "row" or
    "log"); an unknown keyword is a TypeError.

    The file is written under a temporary name and renamed, so an error never leaves a partial
    file. Returns the path; raises :class:`ExportError` with a one-line message.
    """
    path = Path(path)
    Look.from_options(look, also=_OWN_KEYWORDS)  # an unknown keyword fails first
    fmt = _format(path, fmt, PICTURE_FORMATS + DATA_FORMATS)
    if fmt in DATA_FORMATS:
        return export_numbers(trace, stage, head, path, fmt)
    check_folder(path.parent)
    check_size(size, dpi)
    return _write_picture(path, stage_figure(trace, stage, head, **look), fmt, size, dpi)


def export_heads_grid(
    trace: Trace,
    path: str | os.PathLike,
    stage: str = "weights",
    fmt: str | None = None,
    *,
    heads: Iterable[int] | str | None = None,
    size: tuple[int, int] = DEFAULT_SIZE,
    dpi: float = DEFAULT_DPI,
    **look,
) -> Path:
    """Write every head of a per-head stage (default weights) as one grid picture.

    All panels share one colour scale and one colour bar. Options as :func:`export_stage`.
    """
    path = Path(path)
    Look.from_options(look, also=_OWN_KEYWORDS)  # an unknown keyword fails first
    fmt = _format(path, fmt, PICTURE_FORMATS)
    check_folder(path.parent)
    check_size(size, dpi)
    return _write_picture(path, grid_figure(trace, stage, heads, **look), fmt, size, dpi)


def plan_exports(
    trace: Trace,
    stages: Iterable[str] | str | None = None,
    heads: Iterable[int] | str | None = None,
    formats: Iterable[str] | str = ("png", "csv"),
    grid: bool | None = None,
) -> list[tuple[str, str, int | None, str]]:
    """The files ``export_all`` would write, as (file name, stage, head, format).

    Checks every stage, head and format first, so bad input fails before anything is written.
    ``grid`` adds ``<stage>_grid.<fmt>`` for per-head stages (None: with more than one head).
    """
    fmts = parse_formats(formats)
    if stages is None or stages == "all":
        names = computed_stages(trace)
    else:
        items = stages.split(",") if isinstance(stages, str) else list(stages)
        names = tuple(dict.fromkeys(resolve_stage(trace, s.strip()) for s in items if s.strip()))
        if not names:
            raise ExportError("no stage given")
    chosen_heads = resolve_heads(trace, heads)
    with_grid = len(chosen_heads) > 1 if grid is None else grid
    plan: list[tuple[str, str, int | None, str]] = []
    for fmt in fmts:
        if fmt == "npz":
            plan.append(("trace.npz", "", None, "npz"))
            continue
        for stage in names:
            if is_per_head(stage):
                for head in chosen_heads:
                    plan.append((f"{file_stem(stage, head)}.{fmt}", stage, head, fmt))
                if with_grid and fmt in PICTURE_FORMATS:
                    plan.append((f"{stage}_grid.{fmt}", stage, None, fmt))
            else:
                plan.append((f"{file_stem(stage, None)}.{fmt}", stage, None, fmt))
    return plan


def export_all(
    trace: Trace,
    folder: str | os.PathLike,
    formats: Iterable[str] | str = ("png", "csv"),
    *,
    stages: Iterable[str] | str | None = None,
    heads: Iterable[int] | str | None = None,
    grid: bool | None = None,
    name: str | None = None,
    cmap: str | None = None,
    signed_cmap: str | None = None,
    show_values: bool | None = None,
    size: tuple[int, int] = DEFAULT_SIZE,
    dpi: float = DEFAULT_DPI,
    decimals: int | None = None,
    scale: str = "linear",
) -> list[Path]:
    """Write every stage and head (or those chosen) into ``folder``, named predictably.

    Per-head stages: ``weights_head0.png``; shared stages: ``concat.png``, ``output.csv``;
    grids of all heads: ``weights_grid.png``; ``npz``: ``trace.npz``. Everything is checked
    before the first file is written, and the export is all-or-nothing: every file is
    written under a hidden name first and then moved into place; if anything fails (say the
    disk fills up), files it replaced are restored and new ones removed. ``decimals`` and
    ``scale`` as :func:`export_stage`. ``signed_cmap``, when given, replaces ``cmap``
    for the signed score stages (scores, scaled, masked). Returns the paths written.
    """
    folder = check_folder(folder)
    plan = plan_exports(trace, stages, heads, formats, grid)
    if any(fmt in PICTURE_FORMATS for *_, fmt in plan):
        check_size(size, dpi)
    look = dict(name=name, show_values=show_values, decimals=decimals, scale=scale)
    Look.from_options(look).checked_decimals()
    with FileSet(folder) as files:
        for filename, stage, head, fmt in plan:
            path = files.staging(filename)
            look["cmap"] = signed_cmap if signed_cmap and is_signed(stage) else cmap
            if fmt == "npz":
                export_trace_npz(trace, path)
            elif fmt in PICTURE_FORMATS and is_per_head(stage) and head is None:
                export_heads_grid(trace, path, stage, fmt, heads=heads, size=size, dpi=dpi, **look)
            else:
                export_stage(trace, stage, head, path, fmt, size=size, dpi=dpi, **look)
    return files.targets()
