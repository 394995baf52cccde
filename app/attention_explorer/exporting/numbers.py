"""The numbers behind a picture: CSV (token names as headers), NPY, and a whole trace as NPZ.

No pickle anywhere: token names are stored as numpy unicode arrays, the config as JSON text,
so ``np.load(path, allow_pickle=False)`` reads every file.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import numpy as np

from attention_explorer.engine.trace import ALL_STAGES, Trace
from attention_explorer.exporting.options import DATA_FORMATS
from attention_explorer.exporting.safe_text import csv_label
from attention_explorer.exporting.stages import axis_names, resolve_head, resolve_stage
from attention_explorer.writing.atomic import atomic_file, write_bytes_atomic
from attention_explorer.writing.export_errors import ExportError


def _number(value, dtype: np.dtype) -> str:
    """The shortest text that reads back to exactly the same value in the array's dtype."""
    if dtype.kind == "b":
        return "1" if value else "0"
    return str(dtype.type(value))  # numpy's shortest round-trip repr: 0.33333334, -inf


def csv_text(trace: Trace, stage: str, head: int | None) -> str:
    """One stage and head as CSV: a header of column labels, then one labelled row per row.

    The corner cell names the axes (``queries \\ keys``). Values round-trip exactly; masked
    cells read ``-inf``. Token names never carry control characters, and a name a spreadsheet
    would run as a formula ("=1+1") is written with a leading single quote.
    """
    stage = resolve_stage(trace, stage)
    head = resolve_head(trace, stage, head)
    array = np.asarray(trace.stage(stage, head))
    rows_name, cols_name = axis_names(stage)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = [csv_label(label) for label in trace.col_labels(stage)]
    writer.writerow([f"{rows_name} \\ {cols_name}", *header])
    for label, row in zip(trace.row_labels(stage), array):
        writer.writerow([csv_label(label), *(_number(v, array.dtype) for v in row)])
    return out.getvalue()


def read_csv_matrix(path: str | os.PathLike) -> tuple[list[str], list[str], np.ndarray]:
    """Read back a CSV written by :func:`export_numbers`: (row labels, column labels, values)."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    values = np.array([[float(v) for v in row[1:]] for row in body], dtype=np.float64)
    return [row[0] for row in body], header[1:], values


def export_numbers(
    trace: Trace, stage: str, head: int | None, path: str | os.PathLike, fmt: str | None = None
) -> Path:
    """Write one stage and head's numbers as CSV or NPY (chosen by ``fmt`` or the suffix).

    Written atomically; returns the path. Raises :class:`ExportError` for an unknown stage,
    head or format, or a folder that cannot be written.
    """
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in DATA_FORMATS:
        raise ExportError(f"unknown number format {fmt!r}; choose from {', '.join(DATA_FORMATS)}")
    stage = resolve_stage(trace, stage)
    head = resolve_head(trace, stage, head)
    if fmt == "csv":
        return write_bytes_atomic(path, csv_text(trace, stage, head).encode("utf-8"))
    array = np.ascontiguousarray(trace.stage(stage, head))
    with atomic_file(path) as handle:
        np.save(handle, array, allow_pickle=False)
    return path


def trace_arrays(trace: Trace) -> dict[str, np.ndarray]:
    """Every computed stage by name (per-head stages ``[s, ...]``) plus labels and settings."""
    arrays: dict[str, np.ndarray] = {}
    for name in ALL_STAGES:
        if trace.has(name):
            arrays[name] = np.ascontiguousarray(trace[name])
    arrays["heads"] = np.asarray(trace.heads, dtype=np.int64)
    arrays["tokens"] = np.asarray(list(trace.tokens), dtype=np.str_)
    arrays["kv_tokens"] = np.asarray(list(trace.kv_tokens), dtype=np.str_)
    arrays["fully_masked_rows"] = np.asarray(trace.fully_masked_rows, dtype=np.int64)
    arrays["scale"] = np.asarray(trace.scale, dtype=np.float64)
    arrays["config_json"] = np.asarray(json.dumps(trace.config.to_dict(), sort_keys=True))
    return arrays


def export_trace_npz(trace: Trace, path: str | os.PathLike, compress: bool = True) -> Path:
    """Write the whole trace as one ``.npz`` (see :func:`trace_arrays` for the names).

    Readable with ``np.load(path, allow_pickle=False)``; written atomically; returns the path.
    """
    path = Path(path)
    if path.suffix.lower() != ".npz":
        raise ExportError(f"a whole trace is saved as .npz, not {path.name!r}")
    arrays = trace_arrays(trace)
    if not any(trace.has(name) for name in ALL_STAGES):
        raise ExportError("the trace holds no computed stage")
    with atomic_file(path) as handle:
        (np.savez_compressed if compress else np.savez)(handle, **arrays)
    return path
