"""Smoke-test a built binary: ``--version`` and ``--self-test`` must pass, with timings.

python packaging/smoke.py dist/attention-explorer/attention-explorer
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


def smoke_test(executable: Path, version: str) -> int:
    """Check ``--version`` shows ``version`` and ``--self-test`` passes; 0 when both do."""
    failures = 0
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
    from build import package_version

    sys.exit(smoke_test(Path(sys.argv[1]), package_version()))
