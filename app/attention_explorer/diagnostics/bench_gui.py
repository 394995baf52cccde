"""Benchmark: how long the real window takes from one cell edit to repainted stage views.

Run ``python -m attention_explorer.diagnostics.bench_gui`` (a few minutes on 2 cores),
``--quick`` (tiny sizes, few edits) or ``--sweep 64,256`` (choose the sweep's n). Qt runs
offscreen: when ``QT_QPA_PLATFORM`` is unset it becomes ``offscreen`` with a 1920x1080 virtual
screen, so the window lays itself out as on a desktop monitor (1560x980, two or three heatmaps
per row); a platform set by the caller is kept, and the header line prints the window size.

What one edit is: the window is the real
:class:`~attention_explorer.ui.window.main_window.MainWindow` on a projection-mode session of n
tokens, h heads and d_model (built with the same resize functions the controls use), shown,
with throwaway QSettings in a temporary ini file. An
edit is ``MatrixModel.setData`` on cell X[0, 0] of the window's own X editor, which is what
the cell delegate calls after typing: a new X array with one cell changed, assigned to
``session.inputs`` inside a history transaction. Every edit writes a new value.

What "repainted" means offscreen: the offscreen platform paints widgets into a QImage
backing store exactly as on screen (only the final flush to a monitor is a no-op), and Qt
delivers ``QEvent.Paint`` only to widgets inside the visible area. The clock starts just
before ``setData`` and stops when, after ``LiveTrace.updated`` has fired for that edit, the
viewport of every stage heatmap wholly visible in the stage panel, and of the heads grid,
has received its Paint event and that paint (with its backing-store sync) has returned; a
view scrolled partly out of sight is not waited for. Nothing is forced: no ``repaint()`` or
``grab()``; the event loop runs exactly as in the app, so the time includes the repaints Qt
does first (the matrix table, any panel reacting to the edit), the zero-ms coalescing timer,
the compute (inline, or on the worker thread for large sizes), the views' update slots and
the painting itself (pyqtgraph applies levels and the colour map to images at paint time).
Paints of other widgets that come after the last watched view (status bar, walkthrough text)
are not counted; the event loop is let run idle between edits (untimed), and
``gc.collect()`` runs before each edit.

Columns: ``med``/``p95`` are the median and the 95th percentile (nearest rank) of the edit
to painted time. ``other``, ``compute``, ``slots`` and ``paint`` split it: ``compute`` is the
window's own engine pass (``LiveTrace.compute_seconds``, the worker hand-off included),
``slots`` the ``updated`` slots of every view (``StatusLine.paint_seconds``), ``other``
everything else until those slots are done (history, table models, the repaints Qt does
before the coalescing timer fires, freeing the old trace), and ``paint`` the rest, until the
watched views have painted. Each is a median, so they need not add up exactly.

``engine`` is :func:`attention_explorer.engine.compute` called directly on the same session
with the same heads the window asked for, interleaved with the edits in the same process;
``ratio`` = med / engine is how many times longer the user waits than the arithmetic takes
(the machine is noisy: compare ratios rather than absolute times between runs). It runs
where the window runs it: on the main thread when the window computes inline, on one
long-lived Python thread when the window uses its worker thread. That matters: with glibc
malloc, a main-thread pass at n = 256..512 hands its large blocks back to the system and
page-faults them in again next time, and was measured about twice as slow as the same
pass on a long-lived thread, whose arena keeps them. ``path`` says whether the window
computed inline or on the worker thread, and whether it asked the engine for every head or
only the selected one (the ``LiveTrace`` thresholds).

The sweep (h = 8, d_model = 64) finds the largest n whose median edit repaints the
selected head within 100 ms; sizes after one whose median exceeds 10 s are skipped.
Timings are printed, never asserted. The last line is
``summary: p95_n64_ms=X median_n4096_ms=Y largest_n_100ms=Z peak_mb_n4096=W`` (numbers only,
-1 for a size not measured; peak is the process's peak resident memory while n = 4096 was
measured: on Linux the peak is reset before each case, so the transient peaks of earlier
cases do not count, while everything they left resident does; elsewhere it is the process's
peak so far), so runs can be compared; the line before it calibrates the machine
(:mod:`attention_explorer.diagnostics.calibration`), for runs on different machines. The
window itself is driven by :mod:`.bench_gui_window`.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from attention_explorer.diagnostics.bench_gui_window import (
    EditTiming,
    WindowBench,
    application,
)
from attention_explorer.diagnostics.calibration import calibration_line

#: (n, h, d_model) of the latency table; the smallest mirrors the starter session's widths.
LATENCY_CASES = ((8, 2, 8), (64, 8, 64), (512, 8, 64))
QUICK_LATENCY_CASES = ((4, 2, 8), (8, 2, 8))
SWEEP_SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
QUICK_SWEEP_SIZES = (8, 16)
SWEEP_HEADS = 8
SWEEP_D_MODEL = 64
GOAL_S = 0.100
#: The sweep stops once a size's median edit takes longer than this.
SKIP_AFTER_S = 10.0
#: Edits per case (after the warm-up), and the fewest a slow case may get.
EDITS, MIN_EDITS = 30, 5
QUICK_EDITS = 3
#: Slow cases get fewer edits so that each lasts about this long.
CASE_BUDGET_S = 20.0


# -- results -----------------------------------------------------------------------------------
def p95(values: Sequence[float]) -> float:
    """The 95th percentile by nearest rank (the largest value for fewer than 20)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


@dataclass
class CaseResult:
    """Every timed edit and engine pass of one (n, h, d_model)."""

    n: int
    heads: int
    d_model: int
    worker: bool
    selected_head_only: bool
    edits: list[EditTiming] = field(default_factory=list)
    engine: list[float] = field(default_factory=list)

    def median(self, part: str = "total") -> float:
        """Median seconds of one part of the edits (``total``, ``before``, ``paint`` ...)."""
        return statistics.median(getattr(e, part) for e in self.edits)

    @property
    def p95(self) -> float:
        """95th percentile of the edit-to-painted seconds."""
        return p95([e.total for e in self.edits])

    @property
    def engine_median(self) -> float:
        """Median seconds of the direct engine passes."""
        return statistics.median(self.engine)

    @property
    def ratio(self) -> float:
        """Median edit-to-painted time over the median engine time."""
        return self.median() / self.engine_median if self.engine_median > 0 else float("inf")

    @property
    def path(self) -> str:
        """Where the window computed and which heads it asked for."""
        where = "worker" if self.worker else "inline"
        return f"{where}, {'selected head' if self.selected_head_only else 'all heads'}"


def measure(n: int, heads: int, d_model: int, edits: int = EDITS, warmup: int = 3) -> CaseResult:
    """Build the window for one size, warm up, then time ``edits`` edits and engine passes.

    Edits and direct engine passes alternate, so a noisy machine slows both alike. A case
    whose warm-up edit is slow gets fewer edits (at least :data:`MIN_EDITS`, or ``edits``
    when that is smaller) so that it lasts about :data:`CASE_BUDGET_S`.
    """
    with WindowBench(n, heads, d_model) as bench:
        slowest = 0.0
        for _ in range(max(1, warmup)):
            slowest = bench.edit().total
            bench.compute_only()
            if slowest > 1.0:
                break  # one warm-up is enough for slow sizes
        affordable = int(CASE_BUDGET_S / max(slowest, 1e-3))
        count = max(min(edits, MIN_EDITS), min(edits, affordable))
        bench.worker_used = False
        result = CaseResult(n, heads, d_model, worker=False, selected_head_only=False)
        for _ in range(count):
            result.edits.append(bench.edit())
            result.engine.append(bench.compute_only())
        result.worker = bench.worker_used
        result.selected_head_only = bench.selected_head_only
        return result


# -- printing ----------------------------------------------------------------------------------
def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}" if seconds < 0.01 else f"{seconds * 1e3:.1f}"


#: The timing columns both tables share (medians of the parts: see the table's caption).
_TIMING_COLUMNS = ("edits", "med ms", "p95 ms", "engine ms", "ratio")
_PART_COLUMNS = ("other", "compute", "slots", "paint")
LATENCY_HEADER = ("n", "h", "d_model", "path", *_TIMING_COLUMNS, *_PART_COLUMNS)
SWEEP_HEADER = ("n", "path", "selected head only", *_TIMING_COLUMNS, *_PART_COLUMNS, "<= 100 ms")
_TEXT_COLUMNS = {"path", "selected head only", "<= 100 ms"}


def _parts(result: CaseResult) -> tuple[str, ...]:
    return tuple(_ms(result.median(part)) for part in ("other", "compute", "slots", "paint"))


def latency_row(result: CaseResult) -> tuple[str, ...]:
    """The cells of one latency-table row."""
    return (
        str(result.n),
        str(result.heads),
        str(result.d_model),
        result.path,
        str(len(result.edits)),
        _ms(result.median()),
        _ms(result.p95),
        _ms(result.engine_median),
        f"{result.ratio:.1f}",
        *_parts(result),
    )


def sweep_row(result: CaseResult) -> tuple[str, ...]:
    """The cells of one sweep-table row."""
    return (
        str(result.n),
        result.path,
        "yes" if result.selected_head_only else "no",
        str(len(result.edits)),
        _ms(result.median()),
        _ms(result.p95),
        _ms(result.engine_median),
        f"{result.ratio:.1f}",
        *_parts(result),
        "yes" if result.median() <= GOAL_S else "no",
    )


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Plain-text columns two spaces apart: text left-aligned, numbers right-aligned."""
    table = [tuple(header), *map(tuple, rows)]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = []
    for r in table:
        cells = [
            c.ljust(w) if header[i] in _TEXT_COLUMNS else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print both tables; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m attention_explorer.diagnostics.bench_gui")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, three edits each")
    parser.add_argument("--sweep", help="comma-separated n values of the sweep, e.g. 64,256")
    args = parser.parse_args(argv)
    app = application()
    cases = QUICK_LATENCY_CASES if args.quick else LATENCY_CASES
    if args.sweep:
        sizes = tuple(int(s) for s in args.sweep.split(",") if s.strip())
    else:
        sizes = QUICK_SWEEP_SIZES if args.quick else SWEEP_SIZES
    edits, warmup = (QUICK_EDITS, 1) if args.quick else (EDITS, 3)

    probe = WindowBench(4, 2, 8)
    size, shown = probe.window.size(), len(probe.watched)
    probe.close()
    print(
        f"attention_explorer.diagnostics.bench_gui: platform {app.platformName()}, window "
        f"{size.width()}x{size.height()}, {shown} views watched; edit = X[0, 0] via the "
        f"editor's model; projection mode, causal, numpy float32"
    )
    print(
        "times: ms from the edit until every wholly visible stage view and the heads grid has "
        "painted; ratio = med / engine (engine: compute() alone, same session and heads)"
    )
    results: dict[tuple[int, int, int], CaseResult] = {}
    peak_mb: dict[int, float] = {}

    def run(n: int, heads: int, d_model: int) -> CaseResult:
        key = (n, heads, d_model)
        if key not in results:
            reset_peak_resident()  # the peak of this case alone (what earlier ones left counts)
            results[key] = measure(n, heads, d_model, edits, warmup)
            peak_mb[n] = peak_resident_mb()
            r = results[key]
            _progress(f"  n={n} h={heads}: median {_ms(r.median())} ms ({r.path})")
        return results[key]

    latency = [latency_row(run(*case)) for case in cases]
    swept: list[CaseResult] = []
    skipped: list[int] = []
    for n in sizes:
        if skipped or (swept and swept[-1].median() > SKIP_AFTER_S):
            skipped.append(n)
            continue
        swept.append(run(n, SWEEP_HEADS, SWEEP_D_MODEL))
    print()
    print(
        "edit-to-repaint latency; medians in ms of the parts: other (history, models, early "
        "repaints, hand-offs), compute (in the window), slots (views' updated slots), paint"
    )
    print(format_table(LATENCY_HEADER, latency))
    print()
    print(f"sweep: h={SWEEP_HEADS}, d_model={SWEEP_D_MODEL}, goal: median <= 100 ms")
    print(format_table(SWEEP_HEADER, [sweep_row(r) for r in swept]))
    within = [r.n for r in swept if r.median() <= GOAL_S]
    print(f"largest n repainting within 100 ms (median): {max(within) if within else 'none'}")
    if skipped:
        print(f"skipped (a smaller n took over {SKIP_AFTER_S:.0f} s): {skipped}")
    print(calibration_line())  # beside the summary: runs on other machines compare by it
    print(summary_line(results, max(within) if within else 0, peak_mb))
    return 0


def reset_peak_resident() -> bool:
    """Start a new peak of resident memory (Linux: "5" to /proc/self/clear_refs resets
    VmHWM); True where that worked. What is still resident keeps counting in the new peak."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def peak_resident_mb() -> float:
    """This process's peak resident memory since the last reset (Linux) or ever, in MB
    (-1 where the OS does not say)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e6  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:  # Windows
        return -1.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / 1e6 if sys.platform == "darwin" else peak * 1024 / 1e6


def summary_line(
    results: dict[tuple[int, int, int], CaseResult], largest_n: int, peak_mb: dict[int, float]
) -> str:
    """The last line, numbers only, so runs can be compared; -1 marks a size not measured.

    ``summary: p95_n64_ms=X median_n4096_ms=Y largest_n_100ms=Z peak_mb_n4096=W``
    """
    n64 = results.get((64, SWEEP_HEADS, SWEEP_D_MODEL))
    n4096 = results.get((4096, SWEEP_HEADS, SWEEP_D_MODEL))
    p95_64 = _ms(n64.p95) if n64 else "-1"
    median_4096 = _ms(n4096.median()) if n4096 else "-1"
    peak = f"{peak_mb[4096]:.0f}" if n4096 and 4096 in peak_mb else "-1"
    return (
        f"summary: p95_n64_ms={p95_64} median_n4096_ms={median_4096} "
        f"largest_n_100ms={largest_n} peak_mb_n4096={peak}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
