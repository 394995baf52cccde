"""The command line's rules: unknown commands get a suggestion, devices need torch, compute's
summary is bounded, every --out problem is one line with exit 2, examples are aligned."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import attention_explorer.api as api
from attention_explorer.cli import main
from attention_explorer.engine import backend as engine_backend
from attention_explorer.session import compute_session as run

SAMPLE = str(Path(__file__).parents[1] / "sample_session.json")


def one_line_error(capsys, prefix: str = "attention-explorer") -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"{prefix}") and ": error: " in err
    assert "Traceback" not in err
    return err


@pytest.fixture
def window_calls(monkeypatch):
    """Record what would open the window, instead of opening it."""
    calls = []
    monkeypatch.setattr(
        "attention_explorer.ui.window.app.run_app", lambda **kw: calls.append(kw) or 0
    )
    monkeypatch.setattr(api, "show", lambda data: calls.append({"data": data}) or 0)
    return calls


def test_unknown_command_suggests_the_close_one(capsys, window_calls):
    assert main(["comptue"]) == 2
    err = one_line_error(capsys)
    assert "unknown command 'comptue'" in err and "did you mean 'compute'?" in err
    assert window_calls == []


def test_unknown_command_far_from_any_lists_them(capsys, window_calls):
    assert main(["frobnicate"]) == 2
    err = one_line_error(capsys)
    assert "unknown command 'frobnicate'" in err and "compute, explain, export, examples" in err
    assert window_calls == []


def test_an_existing_path_or_a_json_name_still_opens_the_window(tmp_path, window_calls):
    no_suffix = tmp_path / "frobnicate"
    no_suffix.write_text("{}")
    assert main([str(no_suffix)]) == 0
    assert main(["not-yet-there.json"]) == 0
    assert [c["session_path"] for c in window_calls] == [str(no_suffix), "not-yet-there.json"]


def test_gui_example_is_checked_before_the_window_opens(capsys, window_calls):
    assert main(["--example", "nope"]) == 2
    assert "no worked example named 'nope'" in one_line_error(capsys)
    assert main(["--example", "starter"]) == 0
    assert window_calls[0]["data"].name.startswith("Starter")


def test_device_with_numpy_is_refused(capsys):
    assert main(["compute", SAMPLE, "--device", "cuda"]) == 2
    err = one_line_error(capsys, "attention-explorer compute")
    assert "'cuda' needs the torch backend" in err


def test_device_without_torch_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(engine_backend, "torch_installed", lambda: False)
    assert main(["compute", SAMPLE, "--backend", "torch", "--device", "cuda"]) == 2
    assert "torch is not installed" in one_line_error(capsys, "attention-explorer compute")


def test_cuda_means_cuda_zero():
    assert run.resolve_backend("torch", "cuda").device == "cuda:0"
    assert run.resolve_backend("numpy").device == "cpu"


def test_parse_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["compute", SAMPLE, "--backend", "tpu"])
    assert info.value.code == 2
    assert "invalid choice: 'tpu'" in one_line_error(capsys, "attention-explorer compute")


def test_compute_summary_is_bounded_for_2000_tokens(tmp_path, capsys):
    big = api.resize(api.example("starter"), tokens=2000)
    path = api.save(big, tmp_path / "big.json")
    assert main(["compute", str(path)]) == 0
    out = capsys.readouterr().out
    assert len(out) < 10_000, len(out)
    assert "2000 queries x 2000 keys" in out
    assert "1984 more queries not shown" in out and "1984 more keys not shown" in out
    assert out.count("weights, head") == 2  # both heads, 16 rows each


def test_summary_escapes_control_characters_in_token_names(tmp_path, capsys):
    data = api.example("starter")
    data = data.with_changes(tokens=("\x1b[31mred", *data.tokens[1:]))
    path = api.save(data, tmp_path / "esc.json")
    assert main(["compute", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[31mred" in out


def _compute_out(target) -> int:
    return main(["compute", SAMPLE, "--out", str(target)])


def test_compute_out_missing_folder(tmp_path, capsys):
    assert _compute_out(tmp_path / "missing" / "t.npz") == 2
    assert "does not exist" in one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []


def test_compute_out_a_folder_name(tmp_path, capsys):
    assert _compute_out(tmp_path) == 2
    assert "is a folder" in one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []


def test_compute_out_read_only_place(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    real_access = os.access
    if os.geteuid() == 0:  # root writes anywhere: make the check see what a user would
        monkeypatch.setattr(
            os, "access", lambda p, m: False if Path(p) == folder else real_access(p, m)
        )
    try:
        assert _compute_out(folder / "t.npz") == 2
    finally:
        folder.chmod(0o755)
    assert "not writable" in one_line_error(capsys)
    assert list(folder.iterdir()) == []


def test_compute_out_full_disk(tmp_path, capsys, monkeypatch):
    def full(_fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert _compute_out(tmp_path / "t.npz") == 2
    assert "the disk is full" in one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []  # no temporary file left


def test_examples_are_aligned_and_start_with_the_starter(capsys):
    assert main(["examples"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("starter ") and "Starter: the cat sat down" in lines[0]
    infos = api.examples()
    assert len(lines) == len(infos)
    columns = {line.index(info.title) for line, info in zip(lines, infos)}
    assert len(columns) == 1  # every title starts in the same column
    assert columns.pop() >= max(len(info.key) for info in infos) + 1


def test_export_decimals_sets_the_digits_in_the_picture(tmp_path):
    # three-tokens' middle row is [0.2483, 0.5035, 0.2483]: the screen's 4 decimals by
    # default, the tutorial's rounding only when asked for.
    def weights_svg(*extra):
        out = tmp_path / ("d" + "".join(extra))
        args = ["export", "--example", "three-tokens", "--format", "svg", "--out", str(out)]
        assert main([*args, *extra]) == 0
        return next(out.glob("weights_head0.svg")).read_text(encoding="utf-8")

    default, two = weights_svg(), weights_svg("--decimals", "2")
    assert "0.2483" in default and "0.2483" not in two
    assert "0.25" in two


def test_export_decimals_must_be_a_small_whole_number(capsys):
    with pytest.raises(SystemExit):
        main(["export", SAMPLE, "--decimals", "many"])
    assert "expected a whole number 0..12" in one_line_error(capsys, "attention-explorer export")


def test_schema_command_prints_the_published_schema(capsys):
    from pathlib import Path

    assert main(["schema"]) == 0
    published = Path(__file__).resolve().parents[2] / "resources" / "session.schema.json"
    assert capsys.readouterr().out == published.read_text(encoding="utf-8")
