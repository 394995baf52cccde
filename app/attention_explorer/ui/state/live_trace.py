"""LiveTrace: recomputes the session's trace after edits and tells the views.

Bursts of edits are coalesced (latest wins, at most one pass per event-loop turn). Small
problems compute on the GUI thread; large ones on one worker thread, and results of an
older request are dropped. When a pass is limited to the selected head (long sequences), it
keeps the square stages at display resolution (``preview``): the views draw those, and the
rows a hover, the walkthrough or a zoom reads are recomputed. Views connect to ``updated``
and read ``trace``.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from attention_explorer.core.stages import combined_stages
from attention_explorer.engine import AttentionInputError, Trace
from attention_explorer.engine.cache import EngineCache
from attention_explorer.engine.preview import PREVIEW_LIMIT
from attention_explorer.engine.trace import ALL_STAGES
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.evented_session import COMPUTE_FIELDS, Session

#: Above this many score cells (heads x n x m) a pass goes to the worker thread. Up to here
#: (n = 512 with 8 heads: a 7 ms pass) the pass is cheaper than the hand-off: in bench_gui the
#: worker's p95 at n = 256..512 was 33-35 ms against 15-29 inline, medians alike.
WORKER_THRESHOLD = 512 * 512 * 8
#: Above this many score cells only the selected head's stages are computed.
SELECTED_HEAD_ONLY_THRESHOLD = 1024 * 1024 * 8
#: The stages a head-limited pass keeps: all but those that combine every head.
HEAD_LIMITED_STAGES = tuple(s for s in ALL_STAGES if s not in combined_stages())

_startup_frozen = False


def _freeze_startup_objects() -> None:
    """Once per process, after the first trace is shown: ``gc.freeze()``.

    Every object alive then (modules, widgets, the views' items) leaves the collector's sight,
    so later full collections walk only what edits create.
    """
    global _startup_frozen
    if not _startup_frozen:
        _startup_frozen = True
        gc.freeze()


class _Worker(QObject):
    done = Signal(int, object, object)  # request id, trace or None, error or None

    def __init__(self) -> None:
        super().__init__()
        #: The newest request id, set by the GUI thread before it submits (an int assignment
        #: is atomic): a queued request older than this is skipped, not computed.
        self.latest = 0

    @Slot(int, object)
    def run(self, request: int, job) -> None:
        if request != self.latest:
            return  # a newer edit was submitted while this one waited in the queue
        try:
            self.done.emit(request, job(), None)
        except Exception as exc:  # reported in the window, never raised into Qt
            self.done.emit(request, None, exc)


class LiveTrace(QObject):
    """The latest trace of a session, kept current as the session changes.

    Signals: ``updated(trace)`` after a successful pass; ``failed(field, message)`` when the
    session is invalid (the last good trace stays); ``busy(bool)`` around worker passes.
    """

    updated = Signal(object)
    failed = Signal(str, str)
    busy = Signal(bool)
    _submit = Signal(int, object)

    def __init__(self, session: Session, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self.trace: Trace | None = None
        self.error: AttentionInputError | None = None
        self.compute_seconds = 0.0
        self._request = 0
        self._busy = False  # a worker pass for the newest request is awaited
        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(0)
        self._pending.timeout.connect(self.recompute_now)
        self._thread: QThread | None = None
        self._worker: _Worker | None = None
        #: The engine's reusable state, one per thread that computes: a stale worker pass may
        #: still run while an inline pass starts, so they never share a cache.
        self._inline_cache = EngineCache()
        self._worker_cache = EngineCache()
        session.events.all.connect(self._on_session_changed)

    # -- scheduling ------------------------------------------------------------------------
    def _on_session_changed(self, info) -> None:
        name = info.signal.name
        if name in COMPUTE_FIELDS or (name == "selected_head" and self._head_limited()):
            self.schedule()

    def schedule(self) -> None:
        """Ask for a recompute on the next event-loop turn (repeated calls coalesce)."""
        self._pending.start()

    def _problem_size(self) -> int:
        s = self.session
        return s.config.heads * len(s.tokens) * len(s.key_tokens or s.tokens)

    def _head_limited(self) -> bool:
        return self._problem_size() > SELECTED_HEAD_ONLY_THRESHOLD

    @property
    def preview(self) -> int | None:
        """The display limit the next pass makes previews at (None: no previews).

        Only passes limited to the selected head make them: a pass of every head would shrink
        the square stages of heads no view shows (8 x the work at n = 1024), where the views
        shrink just the selected head's. See :mod:`attention_explorer.engine.preview`.
        """
        return PREVIEW_LIMIT if self._head_limited() else None

    def full_trace(self) -> Trace:
        """The current session's trace with every head, computed now (for exports).

        Returns the live trace when it already holds every head; raises AttentionInputError
        when the session cannot be computed.
        """
        trace = self.trace
        if trace is not None and self.error is None and not self._head_limited():
            return trace
        return self._job(all_heads=True, cache=None)()  # pure: nothing kept for an export

    def pass_options(self, all_heads: bool = False):
        """``(heads, stages)`` the next pass asks the engine for; None means all.

        Above :data:`SELECTED_HEAD_ONLY_THRESHOLD` only the selected head is computed, without
        concat and output (they need every head; exports ask for them through full_trace()).
        """
        if all_heads or not self._head_limited():
            return None, None
        s = self.session
        return [min(s.selected_head, s.config.heads - 1)], HEAD_LIMITED_STAGES

    def _job(self, all_heads: bool = False, cache: EngineCache | None = None):
        s = self.session
        data = s.data()
        backend, dtype = s.backend, s.dtype
        heads, stages = self.pass_options(all_heads)
        preview = None if all_heads else self.preview

        def job() -> Trace:
            return compute_session(
                data, backend, dtype=dtype, heads=heads, stages=stages, preview=preview, cache=cache
            )

        return job

    @Slot()
    def recompute_now(self) -> None:
        """Recompute at once: inline for small sizes, else on the worker thread."""
        self._pending.stop()
        self._request += 1
        if self._worker is not None:  # anything still queued there is stale now
            self._worker.latest = self._request
        inline = self._problem_size() <= WORKER_THRESHOLD
        job = self._job(cache=self._inline_cache if inline else self._worker_cache)
        if inline:
            self._set_busy(False)  # an outstanding worker pass is stale now
            started = time.perf_counter()
            try:
                trace = job()
            except Exception as exc:
                self._finish(self._request, None, exc)
                return
            self.compute_seconds = time.perf_counter() - started
            self._finish(self._request, trace, None)
            return
        self._ensure_worker()
        self._set_busy(True)
        self._started = time.perf_counter()
        self._worker.latest = self._request  # (a new worker starts at 0)
        self._submit.emit(self._request, job)

    def _set_busy(self, busy: bool) -> None:
        """Emit ``busy`` when a worker pass starts being awaited or stops (once each)."""
        if busy != self._busy:
            self._busy = busy
            self.busy.emit(busy)

    def _ensure_worker(self) -> None:
        if self._thread is not None:
            return
        self._thread = QThread(self)
        self._thread.setObjectName("attention-compute")
        self._worker = _Worker()
        self._worker.moveToThread(self._thread)
        self._submit.connect(self._worker.run)
        self._worker.done.connect(self._on_worker_done)
        self._thread.start()

    @Slot(int, object, object)
    def _on_worker_done(self, request: int, trace, error) -> None:
        if request != self._request:
            return  # a newer edit is already on its way: drop this stale result
        self.compute_seconds = time.perf_counter() - self._started
        self._set_busy(False)
        self._finish(request, trace, error)

    def _finish(self, request: int, trace: Trace | None, error: Exception | None) -> None:
        if error is not None:
            if isinstance(error, AttentionInputError):
                self.error = error
                self.failed.emit(error.field, error.message)
            else:
                self.error = AttentionInputError("engine", f"{type(error).__name__}: {error}")
                self.failed.emit("engine", str(self.error.message))
            return
        self.error = None
        self.trace = trace
        self.updated.emit(trace)
        _freeze_startup_objects()

    def shutdown(self) -> None:
        """Stop the worker thread (call before the window closes)."""
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait(5000)
            self._thread = None
