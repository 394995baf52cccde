"""Every writer follows the one output policy, on every named hostile output path.

Writers: ``compute --out``, ``model --out``, ``export`` (command line), ``ae.export`` (CSV and
NPZ) and ``ae.save``. A clean case writes a file the app reads back (through a symlink: the
target is replaced, the link stays); a refused case prints or raises exactly one line naming
the file, and leaves what was there untouched: no device replaced, nothing written through a
foreign link, no temporary file left behind.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from outputs import FREE_NAME_ONLY, TARGETS, snapshot

import attention_explorer as ae
from attention_explorer.cli import main
from attention_explorer.exporting import ExportError
from attention_explorer.exporting.numbers import read_csv_matrix
from attention_explorer.session import load_session

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="planting devices and foreign links")


def _cli(capsys, argv) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    return code, err


def _api(call) -> tuple[int, str]:
    try:
        call()
    except (ValueError, TypeError, ExportError) as exc:  # the documented one-line errors
        return 2, str(exc)
    return 0, ""


WRITERS = {
    "cli-compute-out": (
        "trace.npz",
        lambda p, t: _cli(t.capsys, ["compute", "--example", "starter", "--out", str(p)]),
    ),
    "cli-model-out": (
        "session.json",
        lambda p, t: _cli(
            t.capsys, ["model", "--model", str(t.model), "--text", "hello world", "--out", str(p)]
        ),
    ),
    "cli-export": (
        "weights_head0.csv",
        lambda p, t: _cli(
            t.capsys,
            ["export", "--example", "starter", "--stage", "weights", "--head", "0"]
            + ["--format", "csv", "--out", str(p.parent)],
        ),
    ),
    "api-export-csv": ("w.csv", lambda p, t: _api(lambda: ae.export(t.trace, p, head=0))),
    "api-export-npz": ("trace.npz", lambda p, t: _api(lambda: ae.export(t.trace, p))),
    "api-save": ("s.json", lambda p, t: _api(lambda: ae.save(ae.example("starter"), p))),
}


def _reads_back(real) -> None:
    """The file written is one the app (or numpy) reads."""
    if real.suffix == ".json":
        assert load_session(real).tokens
    elif real.suffix == ".npz":
        with np.load(real, allow_pickle=False) as data:
            assert "weights" in data and json.loads(str(data["config_json"]))
    else:
        assert read_csv_matrix(real)[2].size


CASES = sorted(
    (writer, target)
    for writer, (filename, _) in WRITERS.items()
    for target in TARGETS
    if not (target in FREE_NAME_ONLY and writer == "cli-export")
)


def test_the_catalogue_has_every_writer_on_every_target():
    assert len(CASES) >= 80
    assert {w for w, _ in CASES} == set(WRITERS) and {t for _, t in CASES} == set(TARGETS)


class Tools:
    """What the writers need: capsys, the tiny model folder, a trace."""

    def __init__(self, capsys, model):
        self.capsys, self.model = capsys, model
        self.trace = ae.compute(ae.example("starter"))


@pytest.mark.parametrize(("writer", "target"), CASES, ids=[f"{w}:{t}" for w, t in CASES])
def test_writer_on_target(writer, target, tmp_path, capsys, tiny_model):
    folder = tmp_path / "out"
    folder.mkdir()
    filename, write = WRITERS[writer]
    make, refusal = TARGETS[target]
    path = make(folder, filename)
    before = snapshot(path)
    real_before = snapshot(path.resolve()) if path.is_symlink() else None
    code, message = write(path, Tools(capsys, tiny_model))
    leftovers = [p.name for p in folder.rglob(".ae-*")]
    assert leftovers == []
    if refusal is None:
        assert (code, message) == (0, ""), message
        if before[0] == "link":
            assert snapshot(path) == before  # the link stays a link, with the same text
        _reads_back(path.resolve())
        return
    assert code == 2
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert refusal in message and path.name in message, message
    assert snapshot(path) == before
    if real_before is not None:
        assert snapshot(path.resolve()) == real_before  # nothing written through the link
