"""Exporting any array (a difference map) takes the path of every stage: the same figure,
the same painter, CSV with labels that round-trips."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from attention_explorer.display import build_frame, frame_for_array
from attention_explorer.exporting.arrays import array_csv_text, export_array, export_frame
from attention_explorer.exporting.figure import frame_figure, stage_figure
from attention_explorer.exporting.numbers import read_csv_matrix
from attention_explorer.writing.export_errors import ExportError


def test_a_stage_frame_figure_matches_the_stage_figure(trace_factory):
    trace = trace_factory(n=3, mask="causal")
    frame = build_frame(trace, "masked", 0)
    ours = frame_figure(frame, "signed", row_axis="queries", col_axis="keys")
    theirs = stage_figure(trace, "masked", 0)
    assert ours.levels == theirs.levels and ours.cmap == theirs.cmap
    assert ours.title == theirs.title and ours.panels[0].texts == theirs.panels[0].texts


def test_a_difference_map_exports_as_picture_and_numbers(trace_factory, tmp_path):
    before, after = trace_factory(seed=0), trace_factory(seed=1)
    delta = after.stage("weights", 0) - before.stage("weights", 0)  # [3, 3]
    labels = before.tokens
    png = export_array(
        delta,
        "signed",
        "weights: after − before",
        labels,
        labels,
        tmp_path / "diff.png",
        axes=("queries", "keys"),
        size=(400, 300),
    )
    image = QImage(str(png))
    assert (image.width(), image.height()) == (400, 300)
    csv = export_array(delta, "signed", "d", labels, labels, tmp_path / "diff.csv")
    rows, cols, values = read_csv_matrix(csv)
    assert rows == list(labels) and cols == list(labels)
    np.testing.assert_array_equal(values.astype(np.float32), delta)  # exact in its dtype
    npy = export_array(delta, "signed", "d", labels, labels, tmp_path / "diff.npy")
    np.testing.assert_array_equal(np.load(npy, allow_pickle=False), delta)


def test_frames_and_arrays_refuse_in_one_line(tmp_path):
    frame = frame_for_array(np.eye(2), "unit", "eye", "ab", "cd")
    assert export_frame(frame, "unit", tmp_path / "eye.svg").stat().st_size > 0
    with pytest.raises(ExportError, match="unknown format"):
        export_frame(frame, "unit", tmp_path / "eye.txt")
    with pytest.raises(ExportError, match="unknown value kind"):
        export_array(np.eye(2), "odd", "t", "ab", "cd", tmp_path / "x.png")
    with pytest.raises(ExportError, match="labels do not fit"):
        array_csv_text(np.eye(2), ["a"], ["b", "c"])
    assert array_csv_text(np.eye(2), ["=1+1", "b"], ["c", "d"]).splitlines()[1].startswith("'=1+1")
