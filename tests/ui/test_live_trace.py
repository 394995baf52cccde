"""LiveTrace drops a worker result that an edit made stale: the window never shows it."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QThread, QTimer

from attention_explorer.session import Session, starter_session
from attention_explorer.ui.state import live_trace
from attention_explorer.ui.state.live_trace import LiveTrace


@pytest.fixture
def gated_engine(monkeypatch):
    """Every pass goes to the worker thread, and the first one waits until ``release`` is set."""
    real = live_trace.compute_session
    release = threading.Event()
    started: list[tuple[str, ...]] = []

    def gated(data, *args, **kwargs):
        started.append(data.tokens)
        if len(started) == 1:
            assert release.wait(10), "the test never released the first pass"
        return real(data, *args, **kwargs)

    monkeypatch.setattr(live_trace, "WORKER_THRESHOLD", -1)
    monkeypatch.setattr(live_trace, "compute_session", gated)
    return release, started


def test_a_stale_worker_result_is_dropped(qtbot, gated_engine):
    release, started = gated_engine
    session = Session.from_data(starter_session())
    live = LiveTrace(session)
    shown, busy = [], []
    live.updated.connect(lambda trace: shown.append(trace.tokens))
    live.busy.connect(busy.append)
    old = session.tokens
    try:
        live.recompute_now()  # request 1: the worker starts it and waits
        qtbot.waitUntil(lambda: len(started) == 1, timeout=5000)
        session.tokens = ("A", "dog", "ran", "off")  # an edit while it runs
        live.recompute_now()  # request 2: queued behind request 1
        release.set()
        qtbot.waitUntil(lambda: len(started) == 2 and bool(shown), timeout=10000)
        qtbot.wait(50)  # anything else the worker sent has arrived by now
    finally:
        release.set()
        live.shutdown()
    assert started == [old, ("A", "dog", "ran", "off")]  # both passes ran...
    assert shown == [("A", "dog", "ran", "off")]  # ...but only the current one was shown
    assert live.trace.tokens == ("A", "dog", "ran", "off")
    assert busy == [True, False]  # busy once, until the one result delivered


def test_a_queued_stale_request_is_skipped_and_busy_ends_on_an_inline_pass(
    qtbot, gated_engine, monkeypatch
):
    release, started = gated_engine
    session = Session.from_data(starter_session())
    live = LiveTrace(session)
    busy = []
    live.busy.connect(busy.append)
    try:
        live.recompute_now()  # request 1 runs on the worker and waits
        qtbot.waitUntil(lambda: len(started) == 1, timeout=5000)
        session.tokens = ("A", "b", "c", "d")
        live.recompute_now()  # request 2: queued, stale as soon as request 3 comes
        monkeypatch.setattr(live_trace, "WORKER_THRESHOLD", 10**9)
        session.tokens = ("A", "dog", "ran", "off")
        live.recompute_now()  # request 3: small again, computed inline at once
        assert busy == [True, False]  # the status line does not stay on "computing…"
        # a marker queued on the worker's thread behind request 2: it runs once the worker has
        # finished request 1 and taken request 2 off its queue
        drained = []
        QTimer.singleShot(0, live._worker, lambda: drained.append(QThread.currentThread()))
        release.set()
        qtbot.waitUntil(lambda: bool(drained), timeout=10000)
        assert drained == [live._thread]  # (it did run on the worker's thread)
    finally:
        release.set()
        live.shutdown()
    assert ("A", "b", "c", "d") not in started  # request 2 was never computed
    assert live.trace.tokens == ("A", "dog", "ran", "off")


def test_inline_and_worker_passes_never_share_an_engine_cache(qtbot, monkeypatch):
    real = live_trace.compute_session
    caches: list[tuple[str, object]] = []  # (thread name, cache) of every pass

    def recording(data, *args, **kwargs):
        caches.append((threading.current_thread().name, kwargs.get("cache")))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(live_trace, "compute_session", recording)
    session = Session.from_data(starter_session())
    live = LiveTrace(session)
    try:
        live.recompute_now()  # small: inline
        monkeypatch.setattr(live_trace, "WORKER_THRESHOLD", -1)
        session.tokens = ("A", "dog", "ran", "off")
        live.recompute_now()  # now on the worker
        qtbot.waitUntil(lambda: live.trace.tokens == ("A", "dog", "ran", "off"), timeout=10000)
        monkeypatch.setattr(live_trace, "WORKER_THRESHOLD", 10**9)
        live.recompute_now()  # inline again
        monkeypatch.setattr(live_trace, "SELECTED_HEAD_ONLY_THRESHOLD", -1)
        live.full_trace()  # an export's full trace
    finally:
        live.shutdown()
    (main, inline), (worker, on_worker), (_, inline_again), (_, export) = caches
    assert worker != main  # the second pass did run on the worker thread
    assert inline is not None and on_worker is not None and inline is not on_worker
    assert inline_again is inline  # each thread keeps reusing its own
    assert export is None  # a full trace for an export is pure: it keeps nothing
