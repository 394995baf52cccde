"""A multi-file export killed at any step leaves every file old or new, never missing.

A child process exports over an earlier export; its ``os.replace``, ``os.link`` and ``os.unlink``
are wrapped so that the K-th call kills the process with SIGKILL (no cleanup runs). For every K
until the export finishes: each file is the old or the new one, whole; the hidden temporary
files the kill left are removed by the next export into the folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import attention_explorer as ae
    from attention_explorer.exporting import export_all

    folder, seed, kill_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    session = ae.resize(ae.example("starter"), heads=2)
    trace = ae.compute(ae.resize(session, tokens=len(session.tokens) + seed))  # seed: new files
    calls = {"n": 0}

    def killing(real):
        def call(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return call

    if kill_at:
        os.replace, os.link, os.unlink = (killing(f) for f in (os.replace, os.link, os.unlink))
    export_all(trace, folder, "csv,npz", stages="weights,scores")
    print(calls["n"])
    """
)


def _export(folder: Path, seed: int, kill_at: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(seed), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_kill_at_every_step_leaves_each_file_old_or_new(tmp_path):
    old_folder, new_folder, folder = tmp_path / "old", tmp_path / "new", tmp_path / "work"
    for where, seed in ((old_folder, 0), (new_folder, 5)):
        where.mkdir()
        assert _export(where, seed).returncode == 0
    old, new = _files(old_folder), _files(new_folder)
    assert old.keys() == new.keys() and all(old[k] != new[k] for k in old)
    steps, kill_at, killed = 0, 1, 0
    while True:
        folder.mkdir(exist_ok=True)
        for name, data in old.items():
            (folder / name).write_bytes(data)
        result = _export(folder, 5, kill_at)
        if result.returncode == 0:
            steps = int(result.stdout.split()[-1])
            break
        assert result.returncode == -signal.SIGKILL, result.stderr
        killed += 1
        visible = {n: d for n, d in _files(folder).items() if not n.startswith(".")}
        assert visible.keys() == old.keys(), f"killed at call {kill_at}"
        for name, data in visible.items():
            assert data in (old[name], new[name]), f"{name} torn when killed at call {kill_at}"
        assert _export(folder, 5).returncode == 0  # the next run finishes the job and cleans up
        assert _files(folder) == new, f"leftovers after a kill at call {kill_at}"
        for path in folder.iterdir():
            path.unlink()
        kill_at += 1
    assert killed >= 2 * len(old) and steps >= killed  # every move and link was a kill point


def _dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(child.stdout)


def test_sweep_removes_only_leftovers_of_dead_processes(tmp_path):
    from attention_explorer.writing.output_policy import sweep_leftovers

    dead = _dead_pid()
    names = {
        f".ae-{dead}-0123abcd.part": False,  # removed
        f".ae-{dead}-0123abcd-3.part.csv": False,
        f".ae-{dead}-0123abcd-3.old": False,
        f".ae-{os.getpid()}-0123abcd.part": True,  # this process: kept
        f".ae-{dead}-0123abcd.partial": True,  # not our pattern: kept
        ".hidden.part": True,
        "weights.csv": True,
    }
    for name in names:
        (tmp_path / name).write_text("x")
    removed = sweep_leftovers(tmp_path)
    assert sorted(removed) == sorted(n for n, kept in names.items() if not kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(n for n, k in names.items() if k)


def test_temporary_names_are_short_whatever_the_file_name(tmp_path):
    import attention_explorer as ae

    trace = ae.compute(ae.example("starter"))
    path = ae.export(trace, tmp_path / ("w" * 250 + ".csv"), head=0)
    assert path.name == "w" * 250 + ".csv" and path.is_file()
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
