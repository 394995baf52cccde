"""Running a Why? computation off the GUI thread, as the knockout sweep does: an estimate
first (a long job asks before it starts), then the job on a worker thread with progress and a
Cancel button, on the window's :class:`~attention_explorer.ui.widgets.job_worker.JobWorker`
(a causal tool's CausalError is a ModelError: its one line is the message).
:class:`JobControls` is the Start / Cancel / progress / note strip every view shows.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from attention_explorer.ui.widgets import layout_parts as parts
from attention_explorer.ui.widgets.job_worker import JobWorker, Work

#: A job estimated to take longer than this (seconds) asks before starting.
ASK_ABOVE_S = 10.0


class JobControls(QWidget):
    """Start, Cancel, a progress bar and a note for one view's job.

    The view connects ``start_requested`` and answers with :meth:`run_job`; the result comes
    back as ``finished(result)`` (a refusal or a cancel: ``failed(message)``, also shown in
    the note)."""

    start_requested = Signal()
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, name: str, start_text: str = "Start", parent: QWidget | None = None):
        super().__init__(parent)
        self.name, self.start_text = name, start_text
        self.worker = JobWorker(name, self)
        self.start_button = parts.button(start_text)
        self.cancel_button = parts.button("Cancel", enabled=False)
        self.bar = parts.progress_bar()
        self.note = parts.plain_label()
        self._pending: Work | None = None
        self._what = ""
        layout = parts.column(
            self,
            parts.row(self.start_button, self.cancel_button, (self.bar, 1)),
            self.note,
        )
        layout.setContentsMargins(0, 0, 0, 0)
        self.start_button.clicked.connect(lambda: self._on_start())
        self.cancel_button.clicked.connect(lambda: self.worker.cancel.set())
        self.worker.estimated.connect(self._on_estimate)
        self.worker.progress.connect(self._on_progress)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)

    def busy(self) -> bool:
        """True while an estimate or a job runs."""
        return not self.start_button.isEnabled()

    def _on_start(self) -> None:
        if self._pending is not None:  # "Start anyway" after a long estimate
            work, self._pending = self._pending, None
            self._run(work)
            return
        self.start_requested.emit()

    def run_job(self, work: Work, estimate: Callable[[], float] | None, what: str) -> None:
        """Run ``work`` (see :data:`Work`); ``estimate()`` first when given, asking before a
        job longer than :data:`ASK_ABOVE_S`. ``what`` says what runs ("patching 18 sites")."""
        self._what = what
        self.start_button.setText(self.start_text)
        if estimate is None:
            self._run(work)
            return
        self._pending = work
        self.start_button.setEnabled(False)
        self.note.setText(f"Estimating how long {what} takes…")
        self.worker.estimate(estimate)

    def refuse(self, message: str) -> None:
        """Say why the job cannot start (in the note, and as ``failed(message)``)."""
        self._pending = None
        self.note.setText(message)
        self.failed.emit(message)

    def _on_estimate(self, seconds: float) -> None:
        self.start_button.setEnabled(True)
        if seconds > ASK_ABOVE_S:
            self.start_button.setText("Start anyway")
            self.note.setText(
                f"{self._what[:1].upper()}{self._what[1:]} will take about "
                f"{seconds:.0f} s. Press Start anyway to run it."
            )
            return
        work, self._pending = self._pending, None
        self.note.setText(f"About {seconds:.1f} s…")
        if work is not None:
            self._run(work)

    def _run(self, work: Work) -> None:
        self.start_button.setEnabled(False)
        self.start_button.setText(self.start_text)
        self.cancel_button.setEnabled(True)
        self.bar.setVisible(True)
        self.bar.setRange(0, 0)
        self.note.setText(f"{self._what[:1].upper()}{self._what[1:]}…")
        self.worker.run(work)

    def _on_progress(self, done: int, total: int) -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)
        self.bar.setFormat(f"{done} of {total}")

    def _stop(self) -> None:
        self.bar.setVisible(False)
        self.cancel_button.setEnabled(False)
        self.start_button.setEnabled(True)

    def _on_finished(self, result) -> None:
        self._stop()
        self.note.setText("")
        self.finished.emit(result)

    def _on_failed(self, message: str) -> None:
        self._stop()
        self._pending = None
        self.start_button.setText(self.start_text)
        self.note.setText(message[:1].upper() + message[1:])
        self.failed.emit(message)


def backend_of(state) -> str:
    """The backend the model session runs on (the Backend box): ``numpy``, ``torch``…"""
    backend = state.session.backend
    return backend if isinstance(backend, str) else backend.spec
