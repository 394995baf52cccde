"""One job at a time off the GUI thread: :class:`JobWorker` runs a callable on a daemon thread
and reports through Qt signals (queued to the GUI thread). A model's refusal (a ModelError)
becomes its one line, anything else one line naming the exception, never a traceback. The
knockout sweep and the Why? views both run their estimates and jobs on it."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

#: ``work(progress, cancelled)``: the job, given a ``progress(done, total)`` callback and a
#: ``cancelled()`` question to ask between steps.
Work = Callable[[Callable[[int, int], None], Callable[[], bool]], object]


class JobWorker(QObject):
    """``estimated(seconds)``, ``progress(done, total)``, ``finished(result)`` and
    ``failed(message)`` of jobs run on a worker thread; ``cancel`` stops the running one."""

    estimated = Signal(float)
    progress = Signal(int, int)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name
        self.cancel = threading.Event()

    def _thread(self, work: Callable[[], None]) -> None:
        def run() -> None:
            from attention_explorer.pretrained import ModelError

            try:
                work()
            except ModelError as exc:
                self.failed.emit(str(exc))
            except Exception as exc:  # never a traceback on screen
                self.failed.emit(f"the {self.name} stopped: {type(exc).__name__}: {exc}")

        threading.Thread(target=run, name=f"{self.name}-job", daemon=True).start()

    def estimate(self, estimate: Callable[[], float]) -> None:
        """Emit ``estimated(seconds)`` from ``estimate()`` run on a worker thread."""
        self._thread(lambda: self.estimated.emit(float(estimate())))

    def run(self, work: Work) -> None:
        """Emit ``finished(work(progress, cancelled))`` from a worker thread."""
        self.cancel.clear()
        progress = self.progress.emit
        self._thread(lambda: self.finished.emit(work(progress, self.cancel.is_set)))
