"""A one-line calibration of this machine, printed beside benchmark summaries.

Absolute times vary about 4x between machines of the same nominal kind (and between runs on
a shared one), so a benchmark's milliseconds mean little alone. :func:`calibrate` times a
fixed workload that never changes: a plain Python loop (the interpreter's speed, what the
GUI's per-edit bookkeeping costs) and a numpy workload on one thread's worth of elementwise
work, a sort and a small matrix product (memory bandwidth and arithmetic). Two runs compare
by their benchmark times divided by their calibration times. Qt-free, numpy only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

#: Iterations of the Python loop.
PYTHON_STEPS = 300_000
#: Elements of the numpy workload's vector (float32, 4 MiB).
NUMPY_ELEMENTS = 1 << 20
#: Side of the numpy workload's square matrices (float32).
MATRIX_SIDE = 256


@dataclass(frozen=True)
class Calibration:
    """Best-of-``repeats`` milliseconds of the two fixed workloads."""

    python_ms: float
    numpy_ms: float

    @property
    def total_ms(self) -> float:
        """Both workloads together."""
        return self.python_ms + self.numpy_ms


def _python_workload() -> int:
    """A fixed loop of integer arithmetic, a dict and a list (no numpy)."""
    total, seen, items = 0, {}, []
    for i in range(PYTHON_STEPS):
        total += (i * i) % 7
        if i % 64 == 0:
            seen[i & 1023] = total
            items.append(total)
    return total + len(seen) + len(items)


def _numpy_workload() -> float:
    """A fixed numpy workload: elementwise maths, a reduction, a sort and a matrix product."""
    x = np.linspace(-4.0, 4.0, NUMPY_ELEMENTS, dtype=np.float32)  # [N]
    y = np.exp(x) * np.float32(0.5) + np.sin(x)  # [N]
    order = np.sort(y[::-1])  # [N]
    side = MATRIX_SIDE
    a = x[: side * side].reshape(side, side)  # [side, side]
    product = a @ a.T  # [side, side]
    return float(order[-1] + y.sum() + product[0, 0])


def _best_ms(work, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best * 1e3


def calibrate(repeats: int = 5) -> Calibration:
    """Time the fixed Python and numpy workloads, best of ``repeats`` runs each (in ms)."""
    _numpy_workload()  # warm up: first-touch of numpy's memory and BLAS start-up
    return Calibration(
        python_ms=_best_ms(_python_workload, max(1, repeats)),
        numpy_ms=_best_ms(_numpy_workload, max(1, repeats)),
    )


def calibration_line(result: Calibration | None = None) -> str:
    """One line for a benchmark's summary, e.g. ``calibration: python 21.0 ms, numpy 9.8 ms
    (total 30.8 ms; fixed workload, lower is faster)``; calibrates now unless given one."""
    result = calibrate() if result is None else result
    return (
        f"calibration: python {result.python_ms:.1f} ms, numpy {result.numpy_ms:.1f} ms "
        f"(total {result.total_ms:.1f} ms; fixed workload, lower is faster)"
    )
