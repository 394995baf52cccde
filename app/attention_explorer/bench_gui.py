"""Benchmark: how long the real window takes from one cell edit to repainted stage views.

Run ``python -m attention_explorer.bench_gui`` (a few minutes on 2 cores), ``--quick`` (tiny
sizes, few edits) or ``--sweep 64,256`` (choose the sweep's n). Qt runs offscreen: when
``QT_QPA_PLATFORM`` is unset it becomes ``offscreen`` with a 1920x1080 virtual screen, so
the window lays itself out as on a desktop monitor (1560x980, two or three heatmaps per
row); a platform set by the caller is kept, and the header line prints the window size.

What one edit is: the window is the real :class:`~attention_explorer.ui.main_window.MainWindow`
on a projection-mode session of n tokens, h heads and d_model (built with the same resize
functions the controls use), shown, with throwaway QSettings in a temporary ini file. An
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
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import queue
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import (
    QAbstractEventDispatcher,
    QCoreApplication,
    QEvent,
    QEventLoop,
    QObject,
    QSettings,
    QTimer,
)
from PySide6.QtGui import QRegion
from PySide6.QtWidgets import QApplication, QWidget

from attention_explorer.run import compute_session
from attention_explorer.session.model import Session
from attention_explorer.session.resize import set_d_model, set_heads, set_token_count
from attention_explorer.session.starter import starter_session

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
#: A single edit that has not repainted after this long is an error.
EDIT_TIMEOUT_S = 60.0
#: The virtual screen used when this module chooses the offscreen platform.
SCREEN_SIZE = (1920, 1080)
#: The edited cell of X.
EDIT_CELL = (0, 0)


# -- Qt application ----------------------------------------------------------------------------
def application() -> QApplication:
    """The running QApplication, or a new one (offscreen on a 1920x1080 screen when unset)."""
    app = QApplication.instance()
    if app is not None:
        return app  # type: ignore[return-value]
    if "QT_QPA_PLATFORM" in os.environ:
        return QApplication([sys.argv[0] if sys.argv else "bench_gui"])
    folder = Path(tempfile.mkdtemp(prefix="bench_gui_screen_"))
    try:
        config = folder / "screen.json"
        width, height = SCREEN_SIZE
        screen = {"name": "bench", "x": 0, "y": 0, "width": width, "height": height}
        screen |= {"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}
        config.write_text(json.dumps({"screens": [screen]}))
        os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
        return QApplication([sys.argv[0] if sys.argv else "bench_gui"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # read once, when the platform starts


def run_until_idle(limit: int = 500) -> None:
    """Deliver pending events (paints, queued signals) until none is left, or ``limit`` rounds."""
    dispatcher = QAbstractEventDispatcher.instance()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    for _ in range(limit):
        QCoreApplication.sendPostedEvents()
        if dispatcher is None or not dispatcher.processEvents(
            QEventLoop.ProcessEventsFlag.AllEvents
        ):
            break


# -- the session and the window ----------------------------------------------------------------
def make_session(n: int, heads: int, d_model: int) -> Session:
    """The starter session resized to ``n`` tokens, ``heads`` heads and ``d_model``.

    Uses the same resize functions as the window's controls, so every matrix is consistent:
    X ``[n, d_model]``, W_Q/W_K/W_V ``[d_model, d_model]``, W_O ``[d_model, d_model]``.
    """
    data = set_d_model(starter_session(), d_model)
    data = set_heads(data, heads)
    data = set_token_count(data, n)
    return Session.from_data(data)


@dataclass
class EditTiming:
    """Seconds of one edit: to painted, to the end of the updated slots, and the parts."""

    total: float
    updated: float
    compute: float
    slots: float

    @property
    def other(self) -> float:
        """Edit to updated slots done, less compute and slots (history, models, repaints)."""
        return max(0.0, self.updated - self.compute - self.slots)

    @property
    def paint(self) -> float:
        """End of the updated slots to the last watched view painted."""
        return self.total - self.updated


class _PaintWatch(QObject):
    """Event filter on the watched viewports: quits ``loop`` when all painted after arming."""

    def __init__(self, viewports: Sequence[QWidget]):
        super().__init__()
        self.viewports = list(viewports)
        self.loop: QEventLoop | None = None
        self.armed = False
        self.painted: set[int] = set()
        for viewport in self.viewports:
            viewport.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API name
        """Note a Paint of a watched viewport; quit the loop once every one has painted.

        The filter runs before the paint; ``quit`` takes effect when the paint (and its
        backing-store sync) has returned to the event loop.
        """
        if self.armed and event.type() == QEvent.Type.Paint:
            self.painted.add(id(obj))
            if len(self.painted) == len(self.viewports) and self.loop is not None:
                self.loop.quit()
        return False

    @property
    def done(self) -> bool:
        """True when every watched viewport has painted since arming."""
        return self.armed and len(self.painted) == len(self.viewports)

    def remove(self) -> None:
        """Stop filtering the viewports."""
        for viewport in self.viewports:
            viewport.removeEventFilter(self)


class _ThreadRunner:
    """One long-lived Python thread that runs a function and reports its seconds."""

    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._times: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="bench-engine", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        held = None  # keep the last result alive, as LiveTrace keeps its trace
        while (job := self._jobs.get()) is not None:
            try:
                started = time.perf_counter()
                result = job()
                self._times.put(time.perf_counter() - started)
                held = result
            except Exception as exc:  # re-raised on the caller's thread
                self._times.put(exc)
        del held

    def time(self, job: Callable[[], object]) -> float:
        """Seconds ``job`` takes on the thread (raises what it raised)."""
        self._jobs.put(job)
        seconds = self._times.get()
        if isinstance(seconds, Exception):
            raise seconds
        return seconds

    def stop(self) -> None:
        """End the thread."""
        self._jobs.put(None)
        self._thread.join()


def _wholly_shown(widget: QWidget) -> bool:
    """True when every pixel of ``widget`` is on screen (a view scrolled half out may not get
    a Paint at all: QGraphicsView repaints only where changed items are)."""
    if not widget.isVisible() or widget.rect().isEmpty():
        return False
    return QRegion(widget.rect()).subtracted(widget.visibleRegion()).isEmpty()


class WindowBench:
    """One shown MainWindow on a session of ``n`` tokens, timed edit by edit.

    Use as a context manager; the window is closed (without asking to save) on exit.
    """

    def __init__(self, n: int, heads: int, d_model: int):
        from attention_explorer.ui.main_window import MainWindow

        self.n, self.heads, self.d_model = n, heads, d_model
        self._folder = tempfile.TemporaryDirectory(prefix="bench_gui_")
        settings = QSettings(
            str(Path(self._folder.name) / "settings.ini"), QSettings.Format.IniFormat
        )
        self.session = make_session(n, heads, d_model)
        self.window = MainWindow(self.session, settings=settings)
        self.window.show()
        run_until_idle()
        self.live = self.window.live
        self.model = self.window.matrices.editor("X").model()
        self.index = self.model.index(*EDIT_CELL)
        self._base = float(self.model.matrix()[EDIT_CELL])
        self._edits = 0
        self.worker_used = False
        self._runner: _ThreadRunner | None = None
        self._held: object = None
        self._updated_at: float | None = None
        self.live.updated.connect(self._on_updated)
        self.live.busy.connect(self._on_busy)
        views = [v.graphics.viewport() for v in self.window.stages.views().values()]
        views.append(self.window.heads_grid.graphics.viewport())
        self.watched = [v for v in views if _wholly_shown(v)]
        if not self.watched:
            raise RuntimeError("no stage view is wholly visible: the window is too small")
        self._watch = _PaintWatch(self.watched)

    def __enter__(self) -> WindowBench:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the window (history marked clean, so no save prompt) and free it."""
        self._watch.remove()
        if self._runner is not None:
            self._runner.stop()
        self._held = None
        self.window.history.mark_clean()
        self.window.close()
        self.live.shutdown()
        self.window.deleteLater()
        run_until_idle()
        self._folder.cleanup()

    # -- signals -------------------------------------------------------------------------------
    def _on_updated(self, _trace: object) -> None:
        # Connected after every view, so this runs when the views' update slots are done.
        self._updated_at = time.perf_counter()
        self._watch.armed = True
        self._watch.painted.clear()
        self._watch.viewports = [v for v in self.watched if _wholly_shown(v)]

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.worker_used = True

    # -- measuring -----------------------------------------------------------------------------
    @property
    def selected_head_only(self) -> bool:
        """True when the window's last trace holds fewer heads than the session has."""
        trace = self.live.trace
        return trace is not None and len(trace.heads) < self.heads

    def edit(self) -> EditTiming:
        """Write a new value into X[0, 0] through the editor's model; time it until painted."""
        self._edits += 1
        value = round(self._base + 0.01 * (1 + self._edits % 97), 4)  # differs from the last
        gc.collect()
        loop = QEventLoop()
        timeout = QTimer()
        timeout.setSingleShot(True)
        timeout.timeout.connect(loop.quit)
        self._updated_at = None
        self._watch.armed = False
        self._watch.painted.clear()
        # A view can swap its heatmap for a placeholder (e.g. concat at head-limited sizes):
        # watch only the viewports that are on screen now.
        self._watch.viewports = [v for v in self.watched if _wholly_shown(v)]
        self._watch.loop = loop
        started = time.perf_counter()
        if not self.model.setData(self.index, value):
            raise RuntimeError(f"the X editor refused {value}")
        timeout.start(int(EDIT_TIMEOUT_S * 1000))
        if not self._watch.done:
            loop.exec()
        finished = time.perf_counter()
        timeout.stop()
        self._watch.loop = None
        if not self._watch.done or self._updated_at is None:
            error = self.live.error.message if self.live.error is not None else "no update"
            raise RuntimeError(
                f"n={self.n}: the views did not repaint within {EDIT_TIMEOUT_S:.0f} s ({error})"
            )
        timing = EditTiming(
            total=finished - started,
            updated=self._updated_at - started,
            compute=self.live.compute_seconds,
            slots=self.window.status.paint_seconds,
        )
        self._watch.armed = False
        run_until_idle()  # untimed: let the status bar and the rest finish painting
        return timing

    def compute_only(self, on_thread: bool | None = None) -> float:
        """Seconds of one engine pass on the same session and heads, called directly.

        ``on_thread`` (default: when the window's last pass used its worker) runs it on a
        long-lived Python thread instead of the main thread, as the window would.
        """
        data = self.session.data()
        heads, stages = self.live.pass_options()  # exactly what the window asks for

        def job() -> object:
            return compute_session(
                data, self.session.backend, dtype=self.session.dtype, heads=heads, stages=stages
            )

        gc.collect()
        if on_thread is None:
            on_thread = self.worker_used
        if on_thread:
            if self._runner is None:
                self._runner = _ThreadRunner()
            return self._runner.time(job)
        started = time.perf_counter()
        result = job()
        seconds = time.perf_counter() - started
        self._held = result  # the last result stays alive, as LiveTrace keeps its trace
        return seconds


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


LATENCY_HEADER = (
    "n", "h", "d_model", "path", "edits", "med ms", "p95 ms", "engine ms", "ratio",
    "other", "compute", "slots", "paint",
)  # fmt: skip
SWEEP_HEADER = (
    "n", "path", "selected head only", "edits", "med ms", "p95 ms", "engine ms", "ratio",
    "other", "compute", "slots", "paint", "<= 100 ms",
)  # fmt: skip
_TEXT_COLUMNS = {"path", "selected head only", "<= 100 ms"}


def _parts(result: CaseResult) -> tuple[str, ...]:
    return tuple(_ms(result.median(part)) for part in ("other", "compute", "slots", "paint"))


def latency_row(result: CaseResult) -> tuple[str, ...]:
    """The cells of one latency-table row."""
    return (
        str(result.n), str(result.heads), str(result.d_model), result.path,
        str(len(result.edits)), _ms(result.median()), _ms(result.p95),
        _ms(result.engine_median), f"{result.ratio:.1f}", *_parts(result),
    )  # fmt: skip


def sweep_row(result: CaseResult) -> tuple[str, ...]:
    """The cells of one sweep-table row."""
    return (
        str(result.n), result.path, "yes" if result.selected_head_only else "no",
        str(len(result.edits)), _ms(result.median()), _ms(result.p95),
        _ms(result.engine_median), f"{result.ratio:.1f}", *_parts(result),
        "yes" if result.median() <= GOAL_S else "no",
    )  # fmt: skip


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
    parser = argparse.ArgumentParser(prog="python -m attention_explorer.bench_gui")
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
        f"attention_explorer.bench_gui: platform {app.platformName()}, window "
        f"{size.width()}x{size.height()}, {shown} views watched; edit = X[0, 0] via the "
        f"editor's model; projection mode, causal, numpy float32"
    )
    print(
        "times: ms from the edit until every wholly visible stage view and the heads grid has "
        "painted; ratio = med / engine (engine: compute() alone, same session and heads)"
    )
    results: dict[tuple[int, int, int], CaseResult] = {}

    def run(n: int, heads: int, d_model: int) -> CaseResult:
        key = (n, heads, d_model)
        if key not in results:
            results[key] = measure(n, heads, d_model, edits, warmup)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
