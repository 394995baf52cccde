"""ModelRunner: the whole model run after every edit of a model session, off the UI thread.

One daemon worker thread takes the latest request only: requests that arrive while it runs
replace each other, so a burst of edits costs one run after the current one, and a result
whose request is no longer the latest is dropped. The original run (the model's own numbers,
no edit and no knockout) is computed once per model and text; an edited run reuses it (or the
previous edited run) up to the first layer that changed, so an edit in layer L recomputes
from L. Results come back as Qt signals (queued onto the UI thread). The run uses the
session's backend (numpy, or torch on the cpu or a GPU: the model's whole forward pass on
torch); changing it drops the cached runs.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from PySide6.QtCore import QObject, Signal

from attention_explorer.pretrained import ModelError, model_run
from attention_explorer.pretrained.model_errors import is_panic, panic_message
from attention_explorer.pretrained.run_model import WINDOW_THREADS

#: Progress is reported only for runs that take longer than this (seconds).
PROGRESS_AFTER_S = 0.15


def backend_name(backend) -> str:
    """``numpy``, ``torch`` or ``torch:cuda:0`` for an engine Backend (or a name as it is)."""
    return backend if isinstance(backend, str) else backend.spec


class ModelRunner(QObject):
    """``ready(original, edited, request)`` (two ModelRuns), ``progress(done, layers)``,
    ``busy(bool)``, ``failed(message)`` and ``second_ready(text, embedding)``."""

    ready = Signal(object, object, int)
    progress = Signal(int, int)
    busy = Signal(bool)
    failed = Signal(str)
    second_ready = Signal(str, object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.loaded = None
        self.text = ""
        self.backend = "numpy"  # a name or an engine Backend: what model_run runs on
        self.original = None  # the model's own run on the text
        self._previous = None  # the latest edited run (reused up to its first changed layer)
        self._second: dict[str, np.ndarray] = {}  # sentence -> its embedding [d]
        self._jobs: dict[str, tuple] = {}  # the latest "run" and "second" job, at most one each
        self._request = 0
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    @property
    def request_id(self) -> int:
        """The latest request's number."""
        return self._request

    def set_model(self, loaded, text: str, backend="numpy") -> None:
        """Run ``loaded`` on ``text`` with ``backend`` from now on (a change drops the cached
        runs)."""
        with self._wake:
            if loaded is not self.loaded or text != self.text or backend != self.backend:
                self.original, self._previous, self._second = None, None, {}
            self.loaded, self.text, self.backend = loaded, text, backend

    def request(self, edits: dict, knockout=()) -> int:
        """Run the model with ``edits`` ({layer: SessionData}) and ``knockout`` ((layer, head)
        pairs); returns the request's number (``ready`` carries it)."""
        if self.loaded is None:
            return self._request
        with self._wake:
            self._request += 1
            job = (
                self._request,
                self.loaded,
                self.text,
                dict(edits),
                tuple(knockout),
                self.backend,
            )
            self._jobs["run"] = job
            self._start()
        return self._request

    def request_embedding(self, sentence: str) -> None:
        """The mean-pooled embedding of ``sentence`` (``second_ready``), e.g. to compare."""
        if sentence in self._second:
            self.second_ready.emit(sentence, self._second[sentence])
        elif self.loaded is not None:
            with self._wake:
                self._jobs["second"] = (self.loaded, sentence)
                self._start()

    def _start(self) -> None:
        """Wake the worker (under the lock: the thread ends only under it, clearing _thread)."""
        self._wake.notify()
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="model-runner", daemon=True)
            self._thread.start()

    # -- the worker thread ------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._wake:
                if not self._jobs:
                    self._wake.wait(timeout=30.0)
                    if not self._jobs:
                        self._thread = None
                        return
                kind = "run" if "run" in self._jobs else "second"
                job = self._jobs.pop(kind)
            self.busy.emit(True)
            request = job[0] if kind == "run" else None
            try:
                if kind == "run":
                    self._run(*job)
                else:
                    self._embed(*job)
            except ModelError as exc:
                if request in (None, self._request):
                    self.failed.emit(str(exc))
            except Exception as exc:  # the thread must not die silently
                if request in (None, self._request):
                    self.failed.emit(f"could not run the model: {type(exc).__name__}: {exc}")
            except BaseException as exc:  # a Rust panic (tokenizers) is a BaseException
                if not is_panic(exc):
                    raise
                if request in (None, self._request):
                    self.failed.emit(panic_message(exc))
            finally:
                self.busy.emit(bool(self._jobs))

    def _embed(self, loaded, sentence: str) -> None:
        embedding = model_run(loaded, sentence).embedding()  # [d]
        if loaded is self.loaded:
            self._second[sentence] = embedding
        self.second_ready.emit(sentence, embedding)

    def _run(self, request: int, loaded, text: str, edits: dict, knockout: tuple, backend) -> None:
        started = time.perf_counter()

        def step(done: int, total: int) -> None:
            if request == self._request and time.perf_counter() - started > PROGRESS_AFTER_S:
                self.progress.emit(done, total)

        options = {"backend": backend_name(backend), "progress": step, "threads": WINDOW_THREADS}

        def same(run) -> bool:  # a run of this very model, this text and backend
            if run is None or run.model is not loaded:
                return False
            return (run.text, run.backend) == (text, options["backend"])

        original = self.original if same(self.original) else None
        if original is None:
            original = model_run(loaded, text, **options)
            self.original = original
        if not edits and not knockout:
            edited = original
        else:
            reuse = self._previous if same(self._previous) else original
            edited = model_run(loaded, text, edits, knockout, reuse=reuse, **options)
            self._previous = edited
        if request == self._request:  # a newer request makes this result stale
            self.ready.emit(original, edited, request)
