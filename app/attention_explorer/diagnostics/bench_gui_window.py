"""The window under test for :mod:`attention_explorer.diagnostics.bench_gui`: a real MainWindow,
offscreen, one timed cell edit at a time, and the engine alone on the same session for
comparison.

See bench_gui's docstring for what one edit is and what "repainted" means.
"""

from __future__ import annotations

import gc
import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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

from attention_explorer.engine.cache import EngineCache
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.evented_session import Session
from attention_explorer.session.resize import set_d_model, set_heads, set_token_count
from attention_explorer.session.starter import starter_session

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
            if self.done and self.loop is not None:
                self.loop.quit()
        return False

    @property
    def done(self) -> bool:
        """True when every watched viewport has painted since arming (the set watched may
        shrink after arming, when a view is scrolled partly out of sight by the update)."""
        return self.armed and all(id(v) in self.painted for v in self.viewports)

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
        from attention_explorer.ui.window.main_window import MainWindow

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
        #: the engine's reusable state per thread, as the window keeps one per thread
        self._caches = {True: EngineCache(), False: EngineCache()}
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
        if on_thread is None:
            on_thread = self.worker_used
        cache = self._caches[bool(on_thread)]

        def job() -> object:
            return compute_session(
                data,
                self.session.backend,
                dtype=self.session.dtype,
                heads=heads,
                stages=stages,
                preview=self.live.preview,
                cache=cache,
            )

        gc.collect()
        if on_thread:
            if self._runner is None:
                self._runner = _ThreadRunner()
            return self._runner.time(job)
        started = time.perf_counter()
        result = job()
        seconds = time.perf_counter() - started
        self._held = result  # the last result stays alive, as LiveTrace keeps its trace
        return seconds
