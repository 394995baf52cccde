"""The export command: works with no display at all, errors are one line with exit code 2."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.cli import main
from attention_explorer.exporting import read_csv_matrix
from attention_explorer.exporting.qt_app import needs_offscreen

SAMPLE = str(Path(__file__).parents[1] / "sample_session.json")


def _headless_env() -> dict:
    env = dict(os.environ)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        env.pop(name, None)
    return env


def _run(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "attention_explorer", "export", *args]
    return subprocess.run(command, env=_headless_env(), capture_output=True, text=True, timeout=120)


def test_command_works_with_no_display(tmp_path):
    out = tmp_path / "out"
    result = _run(
        *(SAMPLE, "--stage", "weights,scores", "--head", "all", "--format", "png,svg,pdf,csv"),
        *("--out", str(out), "--size", "640x480"),
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "error" not in result.stderr.lower()
    names = sorted(p.name for p in out.iterdir())
    expected = [
        f"{s}_head0.{f}" for s in ("weights", "scores") for f in ("png", "svg", "pdf", "csv")
    ]
    assert names == sorted(expected)
    assert sorted(Path(line).name for line in result.stdout.split()) == names
    png = (out / "weights_head0.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (640, 480)
    _, _, values = read_csv_matrix(out / "weights_head0.csv")
    np.testing.assert_allclose(values[2], [0.19777, 0.40111, 0.40111], atol=1e-4)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stage", "wieghts"], "unknown stage 'wieghts'"),
        (["--head", "5"], "head 5 is not in this trace"),
        (["--format", "png,gif"], "unknown format 'gif'"),
        (["--size", "big"], "size must look like"),
        (["--cmap", "nope"], "unknown colour map"),
    ],
)
def test_command_errors_are_one_line_and_leave_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    result = _run(SAMPLE, "--out", str(out), *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attention-explorer export: error: ")
    assert message in lines[0]
    assert not out.exists()


def test_command_refuses_a_missing_parent_folder(tmp_path, capsys):
    assert _export([SAMPLE, "--out", str(tmp_path / "a" / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist" in err
    assert list(tmp_path.iterdir()) == []


def test_command_needs_a_source(capsys):
    assert _export([]) == 2
    assert "give a session file or --example" in capsys.readouterr().err


def test_command_missing_session_file(tmp_path, capsys):
    assert _export([str(tmp_path / "none.json"), "--out", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_command_npz_and_grid_in_process(tmp_path, capsys):
    args = [SAMPLE, "--format", "npz,png", "--grid", "--out", str(tmp_path), "--size", "400x300"]
    assert _export(args) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["trace.npz", "weights_grid.png", "weights_head0.png"]


def test_cli_dispatches_export(tmp_path):
    assert main(["export", SAMPLE, "--format", "csv", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "weights_head0.csv").is_file()


def test_offscreen_only_without_a_display():
    assert needs_offscreen({}, "linux")
    assert not needs_offscreen({"DISPLAY": ":0"}, "linux")
    assert not needs_offscreen({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert not needs_offscreen({"QT_QPA_PLATFORM": "xcb"}, "linux")
    assert not needs_offscreen({}, "darwin") and not needs_offscreen({}, "win32")


def _export(argv) -> int:
    return main(["export", *argv])
