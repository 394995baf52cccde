# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""Beside the window a model run holds BLAS to one thread (on two busy cores several threads
wait on each other: a MiniLM run took 432 ms instead of 21), while a run alone (a script,
the command line) keeps every core: every run the window starts (overview, edit, sweep and
its estimate) asks for ``WINDOW_THREADS``."""

from __future__ import annotations

from model_folders import (  # noqa: F401 - fixtures pytest finds here
    gpt2_folder,
    load,
    model_window,
    open_head,
)
from test_model_live import RUN_MS, edit_w_q, ran

from attention_explorer.pretrained import run_model as run_module


def test_every_run_the_window_starts_holds_one_thread(
    qtbot, model_window, gpt2_folder, monkeypatch
):
    asked = []
    real = run_module.blas_threads

    def recorded(limit):
        asked.append(limit)
        return real(limit)

    monkeypatch.setattr(run_module, "blas_threads", recorded)
    window = model_window
    load(qtbot, window, gpt2_folder)  # the overview
    open_head(qtbot, window, 1, 0)
    live = ran(qtbot, window)
    edit_w_q(window)
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    window.sweep.action.trigger()
    dialog = window.sweep.dialog
    with qtbot.waitSignal(dialog.worker.finished, timeout=RUN_MS):
        dialog.start(confirmed=True)
    dialog.close()
    assert len(asked) > 12 and set(asked) == {run_module.WINDOW_THREADS} == {1}
    asked.clear()
    run_module.model_run(gpt2_folder, "the cat sat")  # alone: every core
    assert asked == [None]
