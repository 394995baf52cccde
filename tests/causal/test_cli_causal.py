"""``attention-explorer patch | lens | attribution`` on the shipped tiny-induction: the files
hold the API's numbers (CSV, .npy, a picture), the output is checked before the model runs,
and every refusal is one line with exit code 2."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.cli import main
from tests.causal.conftest import TINY, TINY_CLEAN, TINY_CORRUPTED

PATCH = ["patch", str(TINY), "--clean", TINY_CLEAN, "--corrupted", TINY_CORRUPTED]
PAIR = ["--answer", "crab", "--wrong", "bear"]


def run(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_patch_writes_the_map_as_csv_npy_and_a_picture(tmp_path, capsys):
    expected = ae.patch(
        TINY, TINY_CLEAN, TINY_CORRUPTED, site="attn_out", answer="crab", wrong="bear"
    )
    code, out, err = run(
        [*PATCH, *PAIR, "--site", "attn_out", "--out", str(tmp_path / "p.npy")], capsys
    )
    assert code == 0, err
    assert "about" in err and "clean" in out and "layer 1, 17 " in out
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), np.asarray(expected))
    assert main([*PATCH, *PAIR, "--site", "attn_out", "--out", str(tmp_path / "p.csv")]) == 0
    rows = list(csv.reader((tmp_path / "p.csv").open(encoding="utf-8")))
    assert rows[0][0] == "layer \\ position" and rows[0][4] == "3 lion"
    assert [r[0] for r in rows[1:]] == ["layer 0", "layer 1"]
    np.testing.assert_allclose([[float(v) for v in r[1:]] for r in rows[1:]], expected.values)
    assert main([*PATCH, *PAIR, "--site", "head_out", "--out", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_attribution_and_lens(tmp_path, capsys):
    argv = ["attribution", str(TINY), "--text", TINY_CLEAN, "--target", "crab"]
    code, out, err = run([*argv, "--distractor", "bear", "--out", str(tmp_path / "a.npy")], capsys)
    assert code == 0, err
    expected = ae.head_attribution(TINY, TINY_CLEAN, target="crab", distractor="bear")
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.asarray(expected))
    assert "layer 1, head 0" in out and f"{expected.total:+.4f}" in out
    code, out, err = run(
        ["lens", str(TINY), "--text", TINY_CLEAN, "--out", str(tmp_path / "l.npy")], capsys
    )
    assert code == 0, err
    lens = ae.logit_lens(TINY, TINY_CLEAN)
    np.testing.assert_array_equal(np.load(tmp_path / "l.npy"), lens.log_probs)
    assert "after layer 1: 'crab'" in out
    assert main(["lens", str(TINY), "--text", TINY_CLEAN, "--out", str(tmp_path / "l.csv")]) == 0
    rows = list(csv.reader((tmp_path / "l.csv").open(encoding="utf-8")))
    assert len(rows) == 1 + 3 * len(lens.tokens)
    last = rows[-1]
    assert last[:4] == ["after layer 1", str(len(lens.tokens) - 1), "swan", "crab"]
    assert float(last[4]) == pytest.approx(lens.top_probs[-1, -1, 0])
    assert main(["lens", str(TINY), "--text", TINY_CLEAN, "--out", str(tmp_path / "l.svg")]) == 0
    assert b"<svg" in (tmp_path / "l.svg").read_bytes()[:400]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--out", "x.txt"], "--out must end in"),
        (["--out", "no/such/folder/x.csv"], "does not exist"),
    ],
)
def test_the_output_is_checked_before_the_model_runs(extra, words, capsys):
    argv = ["patch", "no-such-model", "--clean", "a", "--corrupted", "b", *PAIR, *extra]
    code, out, err = run(argv, capsys)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_a_folder_as_out_is_refused(tmp_path, capsys):
    (tmp_path / "taken.csv").mkdir()
    code, _, err = run([*PATCH, *PAIR, "--out", str(tmp_path / "taken.csv")], capsys)
    assert code == 2 and "is a folder" in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([*PATCH[:4], "--corrupted", "owl hen", *PAIR], "corrupted prompt 2"),
        ([*PATCH[:4], "--corrupted", TINY_CLEAN, *PAIR, "--site", "pattern"], "on both prompts"),
        ([*PATCH, "--answer", "zebra", "--wrong", "bear"], "'zebra' is not one token"),
        (["attribution", str(TINY), "--text", "owl", "--target", "99"], "99"),
    ],
)
def test_refusals_are_one_line(tmp_path, capsys, argv, words):
    code, _, err = run([*argv, "--out", str(tmp_path / "x.csv")], capsys)
    lines = [line for line in err.strip().splitlines() if "about" not in line]
    assert code == 2 and words in err and len(lines) == 1
    assert ("about" in err) == ("both prompts" in words)  # refused before the estimate
    assert "Traceback" not in err and not (tmp_path / "x.csv").exists()
