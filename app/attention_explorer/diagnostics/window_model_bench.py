"""Edit → new output shown, timed in the real window (offscreen Qt): the window row of
``python -m attention_explorer.diagnostics.model_bench`` (issue 18: "after an edit in layer L, the
window shows the new output within 100 ms").

The window is opened as a learner would have it: the Model panel loads the model and text,
opens a head of layer L, and waits for the model's own run. Each repeat then edits one W_Q
cell through the session and its undo history (what typing in a cell does), and waits, turning
Qt's event loop, until the Output panel holds the run of that edit. The time covers everything
in between: the window's own recompute of the layer, the model run on the worker thread and
the drawing of the overview and the output.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable


class WindowTimeout(RuntimeError):
    """The window did not reach the awaited state in time."""


def _app():
    """The QApplication, made offscreen when there is none yet (no screen needed)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication([])


def wait_until(app, done: Callable[[], bool], timeout_s: float = 120.0) -> None:
    """Turn the event loop until ``done()`` (as pytest-qt's ``waitUntil``), or raise."""
    end = time.perf_counter() + timeout_s
    while not done():
        app.processEvents()
        if time.perf_counter() > end:
            raise WindowTimeout(f"the window did not get there in {timeout_s:.0f} s")
        time.sleep(0.0005)


def _open_window(app, folder: str):
    from PySide6.QtCore import QSettings

    from attention_explorer.ui.window.main_window import MainWindow

    settings = QSettings(os.path.join(folder, "bench.ini"), QSettings.Format.IniFormat)
    window = MainWindow(session=None, settings=settings)
    window.model_dock.show()
    window.resize(1366, 768)
    window.show()
    app.processEvents()
    return window


def _edit_once(window, row: int) -> None:
    """One W_Q cell changed by 0.5, one undo step (as typing a number into the cell)."""
    inputs = window.session.inputs
    w_q = inputs.W_Q.copy()  # [d_model, heads*d_k]
    w_q[row % w_q.shape[0], 0] += 0.5
    with window.history.transaction("Edit W_Q"):
        window.session.inputs = inputs.with_array("W_Q", w_q)


def edit_to_output_ms(model: str, text: str, layer: int, repeat: int = 20) -> list[float]:
    """Milliseconds from each of ``repeat`` W_Q edits in ``layer`` to the Output panel showing
    that edit's run, in a fresh window on ``model`` (a name or folder) and ``text``."""
    app = _app()
    with tempfile.TemporaryDirectory() as folder:
        window = _open_window(app, folder)
        try:
            panel, live = window.model_panel, window.model_live
            panel.model_edit.setText(str(model))
            panel.text_edit.setText(text)
            panel.load()
            wait_until(app, lambda: panel.loaded is not None)
            panel.open_head(layer, 0)
            wait_until(app, lambda: panel.origin is not None)

            def shown_latest() -> bool:
                return live.edited is not None and live.runner.request_id == live.shown_request

            wait_until(app, shown_latest)
            times = []
            for i in range(max(1, repeat) + 1):  # the first is a warm-up
                before = live.shown_request
                start = time.perf_counter()
                _edit_once(window, i)
                wait_until(app, lambda b=before: live.shown_request > b and shown_latest())
                times.append((time.perf_counter() - start) * 1000)
            return times[1:]
        finally:
            window.history.mark_clean()
            window.live.shutdown()
            window.close()
            app.processEvents()


def summary(times: list[float]) -> tuple[float, float]:
    """(median, 95th percentile) of ``times`` (nearest rank)."""
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95
