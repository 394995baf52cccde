"""``attention-explorer --self-test`` on the installed package: every check passes.

The unit tests below also show that the self-test really fails: a failing check, a Qt warning
or stray error output each give exit code 1 with a FAIL line.
"""

import io
import os
import subprocess
import sys

import pytest

from attention_explorer import __version__
from attention_explorer.diagnostics import self_test

CHECK_NAMES = [name for name, _ in self_test.CHECKS]


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    return subprocess.run(
        [sys.executable, "-m", "attention_explorer", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_self_test_passes_in_a_subprocess():
    done = _run("--self-test")
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    for name in [*CHECK_NAMES, "Qt messages"]:
        assert any(line.startswith("ok") and f" {name}" in line for line in lines), name
    assert not any(line.startswith("FAIL") for line in lines)
    assert "self-test passed" in lines[-1]
    assert done.stderr.strip() == ""


def test_version_comes_from_the_package():
    done = _run("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"attention-explorer {__version__}"


def _run_checks(monkeypatch, checks) -> tuple[int, str]:
    monkeypatch.setattr(self_test, "CHECKS", checks)
    out = io.StringIO()
    return self_test.run_self_test(out=out), out.getvalue()


def test_a_failing_check_fails_the_self_test(monkeypatch):
    def broken(state):
        raise self_test.CheckFailed("deliberately broken")

    def crashing(state):
        return {}["missing"]

    checks = (("version", self_test.check_version), ("broken", broken), ("crash", crashing))
    code, out = _run_checks(monkeypatch, checks)
    assert code == 1
    assert "ok    version" in out
    assert "FAIL  broken: deliberately broken" in out
    assert "FAIL  crash: KeyError" in out
    assert "self-test FAILED: 2 of" in out


def test_unexpected_qt_warning_fails_but_benign_one_does_not(monkeypatch):
    from PySide6.QtCore import qWarning

    def warn(state):
        self_test.check_application(state)
        qWarning("This plugin does not support propagateSizeHints()")
        qWarning("something really went wrong")
        return "warned"

    code, out = _run_checks(monkeypatch, (("warn", warn),))
    assert code == 1
    assert "FAIL  Qt messages: 1 unexpected" in out
    assert "something really went wrong" in out
    assert "propagateSizeHints" not in out


@pytest.mark.parametrize("how", ["python", "fd"])
def test_stray_error_output_fails(monkeypatch, how):
    def noisy(state):
        if how == "python":
            print("Traceback (most recent call last): oops", file=sys.stderr)
        else:
            os.write(2, b"libfoo: cannot open shared object\n")
        return "noisy"

    code, out = _run_checks(monkeypatch, (("noisy", noisy),))
    assert code == 1
    assert "FAIL  error output: 1 unexpected line(s)" in out
    assert ("oops" in out) if how == "python" else ("libfoo" in out)


def test_engine_check_reports_row_sums():
    state = self_test.SelfTest(scratch=None)
    self_test.check_example(state)
    detail = self_test.check_engine(state)
    assert "sum to 1" in detail or "not checked" in detail
