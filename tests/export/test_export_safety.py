"""Export safety: no control characters in SVG, PDF or CSV, no spreadsheet formulas from token
names, and a multi-file export that is all-or-nothing."""

from __future__ import annotations

import csv
import os
import xml.etree.ElementTree as ET

import pytest

import attention_explorer.exporting.stage_exports as api
from attention_explorer.exporting import ExportError, export_all, export_stage

HOSTILE = ["=1+1", "a\x00b", "\x1b[31mred", "@SUM(A1)", "-2+3", "tab\tname"]


@pytest.fixture
def hostile(trace_factory):
    return trace_factory(n=6, mask="causal", tokens=HOSTILE, seed=5)


def test_svg_is_valid_xml_without_control_characters(hostile, tmp_path):
    path = export_stage(hostile, "weights", 0, tmp_path / "w.svg", name="x\x07y")
    raw = path.read_text(encoding="utf-8")
    assert not any(ord(c) < 32 and c not in "\n\r\t" for c in raw)
    assert "\x1b" not in raw and "\x00" not in raw
    texts = [e.text for e in ET.parse(path).getroot().iter() if e.text and e.text.strip()]
    assert "a\ufffdb" in texts and "=1+1" in texts  # replaced, not dropped; no quote in pictures


def test_pdf_carries_no_control_characters(hostile, tmp_path):
    path = export_stage(hostile, "weights", 0, tmp_path / "w.pdf", title="t\x1b[0m")
    assert b"\x1b[" not in path.read_bytes()


def test_csv_neutralises_formulas_and_control_characters_in_names_only(hostile, tmp_path):
    path = export_stage(hostile, "scores", 0, tmp_path / "s.csv")
    raw = path.read_text(encoding="utf-8")
    assert "\x00" not in raw and "\x1b" not in raw
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][1:] == [
        "'=1+1",
        "a\ufffdb",
        "\ufffd[31mred",
        "'@SUM(A1)",
        "'-2+3",
        "tab\ufffdname",
    ]
    assert [r[0] for r in rows[1:]] == rows[0][1:]
    numbers = [float(v) for r in rows[1:] for v in r[1:]]
    assert any(v < 0 for v in numbers)  # a negative number is still a number, not quoted
    assert not any(v.startswith("'") for r in rows[1:] for v in r[1:])


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_a_failed_export_all_restores_replaced_files_and_removes_new_ones(
    trace_factory, tmp_path, monkeypatch
):
    trace = trace_factory(heads=2, n=4, seed=1)
    export_all(trace, tmp_path, "csv", stages="scores")  # scores_head0.csv, scores_head1.csv
    (tmp_path / "notes.txt").write_text("mine")
    before = _snapshot(tmp_path)
    calls = {"n": 0}
    real = api.export_stage

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise ExportError("the disk is full")
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "export_stage", failing)
    with pytest.raises(ExportError, match="disk is full"):
        export_all(trace, tmp_path, "csv", stages="scores,weights", decimals=2)
    assert calls["n"] == 4  # it failed mid-way, after writing three files
    assert _snapshot(tmp_path) == before  # old files as they were, nothing new, no temp files


def test_a_failure_while_moving_files_into_place_undoes_the_moves(
    trace_factory, tmp_path, monkeypatch
):
    trace = trace_factory(heads=2, n=4, seed=1)
    export_all(trace, tmp_path, "csv", stages="scores")
    before = _snapshot(tmp_path)
    other = trace_factory(heads=2, n=4, seed=9)
    real, moves = os.replace, {"n": 0}

    def flaky(src, dst):  # the second move of a finished file into its final name fails
        if not os.path.basename(dst).startswith("."):
            moves["n"] += 1
            if moves["n"] == 2:
                raise OSError(28, "No space left on device")
        return real(src, dst)

    import attention_explorer.writing.transaction as transaction

    monkeypatch.setattr(transaction.os, "replace", flaky)
    with pytest.raises(ExportError, match="the disk is full"):
        export_all(other, tmp_path, "csv", stages="scores,weights")
    monkeypatch.setattr(transaction.os, "replace", real)
    assert _snapshot(tmp_path) == before


def test_export_all_returns_every_file_it_wrote(trace_factory, tmp_path):
    trace = trace_factory(heads=2, n=3)
    written = export_all(trace, tmp_path, "png,csv", stages="weights", decimals=3)
    assert sorted(p.name for p in written) == sorted(p.name for p in tmp_path.iterdir())
    assert {p.name for p in written} >= {"weights_head0.png", "weights_grid.png"}
