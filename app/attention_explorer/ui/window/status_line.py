"""StatusLine: backend, sizes, compute and paint time, and the last message, in the status bar."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel, QStatusBar

from attention_explorer.engine import Trace
from attention_explorer.session import Session
from attention_explorer.ui.state.live_trace import LiveTrace


class StatusLine:
    """Fills a QStatusBar. ``begin_paint``/``end_paint`` bracket the views' update slots."""

    def __init__(self, bar: QStatusBar, session: Session, live: LiveTrace):
        self.bar = bar
        self.session = session
        self.live = live
        self.engine_label = QLabel()
        self.size_label = QLabel()
        self.time_label = QLabel()
        self.busy_label = QLabel("computing…")
        self.busy_label.hide()
        for label in (self.busy_label, self.size_label, self.engine_label, self.time_label):
            bar.addPermanentWidget(label)
        self.paint_seconds = 0.0
        self._paint_started = 0.0
        self._trace_message = ""  # the last message about the trace itself ('' when none)
        self._input_message = ""  # the last refused edit ('' when none)
        live.busy.connect(self.busy_label.setVisible)
        live.failed.connect(self._on_failed)
        for name in ("inputs", "config", "tokens", "kv_tokens"):
            getattr(session.events, name).connect(self._on_document_changed)

    def begin_paint(self, trace: Trace) -> None:
        """Connected to LiveTrace.updated before any view."""
        self._paint_started = time.perf_counter()

    def end_paint(self, trace: Trace) -> None:
        """Connected to LiveTrace.updated after every view: shows the timings and sizes."""
        self.paint_seconds = time.perf_counter() - self._paint_started
        self.engine_label.setText(f"{trace.backend.label} · {trace.dtype}")
        self._show_sizes()
        compute_ms = self.live.compute_seconds * 1000
        views_ms = self.paint_seconds * 1000
        self.time_label.setText(f"compute {compute_ms:.1f} ms · views {views_ms:.1f} ms")
        note = ""
        if trace.notes:
            note = " ".join(trace.notes)
        elif trace.fully_masked_rows:
            rows = ", ".join(trace.tokens[i] for i in trace.fully_masked_rows[:5])
            note = f"Every key is hidden from {rows}: those weight rows are 0."
        if note:
            self.bar.showMessage(note, 8000)
        elif self._trace_message and self.bar.currentMessage() == self._trace_message:
            self.bar.clearMessage()  # an old note that no longer holds; other messages stay
        self._trace_message = note

    def _show_sizes(self) -> None:
        """The session's sizes, the numbers the controls and the token strip show too (during
        a drag the trace on screen may still be one step behind them)."""
        s = self.session
        config = s.config
        text = (
            f"{len(s.tokens)}×{len(s.key_tokens)} tokens · {config.heads} head"
            f"{'s' if config.heads > 1 else ''} · d_k {config.head_dim}"
        )
        if self.size_label.text() != text:
            self.size_label.setText(text)

    def _on_failed(self, field: str, message: str) -> None:
        self._trace_message = (
            f"Not computed — {field}: {message}. The views show the last valid state."
        )
        self.bar.showMessage(self._trace_message)

    def show(self, text: str, msecs: int = 8000) -> None:
        """Show a message for a while."""
        self.bar.showMessage(text, msecs)

    def show_input_error(self, text: str) -> None:
        """Show why an edit was refused, until a later edit goes through."""
        self._input_message = text
        self.bar.showMessage(text, 20000)

    def _on_document_changed(self, *_args: object) -> None:
        """A refused edit changes nothing, so any change is a later edit that went through."""
        self._show_sizes()
        if self._input_message and self.bar.currentMessage() == self._input_message:
            self.bar.clearMessage()
        self._input_message = ""
