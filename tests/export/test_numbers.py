"""CSV, NPY and NPZ hold exactly the engine's numbers, with token names as headers."""

import csv

import numpy as np
import pytest

from attention_explorer.exporting import (
    ExportError,
    export_numbers,
    export_stage,
    export_trace_npz,
    read_csv_matrix,
)


def test_csv_values_equal_the_trace(four_heads, tmp_path):
    path = export_numbers(four_heads, "weights", 2, tmp_path / "w.csv")
    rows, cols, values = read_csv_matrix(path)
    assert rows == list(four_heads.tokens) and cols == list(four_heads.kv_tokens)
    expected = four_heads.stage("weights", 2)
    assert values.astype(expected.dtype).tobytes() == expected.tobytes()  # bit for bit


def test_csv_header_and_masked_cells(pizza, tmp_path):
    path = export_stage(pizza, "masked", 0, tmp_path / "m.csv")
    with open(path, newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["queries \\ keys", "I", "love", "pizza"]
    assert [row[0] for row in table[1:]] == ["I", "love", "pizza"]
    assert table[1][2:] == ["-inf", "-inf"]  # causal: 'I' sees only itself
    _, _, values = read_csv_matrix(path)
    np.testing.assert_array_equal(values.astype(np.float32), pizza.stage("masked", 0))


def test_csv_of_shared_stage_and_mask(four_heads, tmp_path):
    _, cols, values = read_csv_matrix(
        export_numbers(four_heads, "concat", None, tmp_path / "c.csv")
    )
    assert cols == [str(i) for i in range(12)]
    np.testing.assert_array_equal(values.astype(np.float32), four_heads["concat"])
    _, _, mask = read_csv_matrix(export_numbers(four_heads, "mask", None, tmp_path / "k.csv"))
    np.testing.assert_array_equal(mask, four_heads["mask"].astype(float))


def test_csv_quotes_awkward_tokens(trace_factory, tmp_path):
    tokens = ["a,b", 'say "hi"', "x\ny"]
    trace = trace_factory(n=3, tokens=tokens)
    rows, cols, _ = read_csv_matrix(export_numbers(trace, "scores", 0, tmp_path / "s.csv"))
    written = ["a,b", 'say "hi"', "x\ufffdy"]  # a line break is a control character: replaced
    assert rows == written and cols == written


def test_npy_round_trips(four_heads, tmp_path):
    path = export_numbers(four_heads, "head_outputs", 3, tmp_path / "h.npy")
    loaded = np.load(path, allow_pickle=False)
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, four_heads.stage("head_outputs", 3))


def test_npz_holds_the_whole_trace_without_pickle(four_heads, tmp_path):
    path = export_trace_npz(four_heads, tmp_path / "trace.npz")
    with np.load(path, allow_pickle=False) as npz:
        for name in "Q K V scores scaled masked weights head_outputs concat output mask".split():
            np.testing.assert_array_equal(npz[name], four_heads[name])
        assert npz["weights"].shape == (4, 6, 6)
        assert list(npz["tokens"]) == list(four_heads.tokens)
        assert list(npz["heads"]) == [0, 1, 2, 3]
        assert "X" not in npz.files  # direct mode has no embeddings
        assert '"heads": 4' in str(npz["config_json"])


def test_unknown_number_format(pizza, tmp_path):
    with pytest.raises(ExportError, match="unknown"):
        export_numbers(pizza, "weights", 0, tmp_path / "w.xlsx")
    with pytest.raises(ExportError, match="npz"):
        export_trace_npz(pizza, tmp_path / "t.zip")
    assert list(tmp_path.iterdir()) == []
