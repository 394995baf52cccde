"""The benchmark's paint watch: an edit is painted when every view still watched has painted."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from attention_explorer.diagnostics.bench_gui_window import _PaintWatch


def test_done_needs_each_watched_viewport_not_just_as_many_paints(qapp):
    first, second, third = QWidget(), QWidget(), QWidget()
    watch = _PaintWatch([first, second])
    watch.armed = True
    watch.painted = {id(second), id(third)}  # as many paints as views, but not the first
    assert not watch.done
    watch.viewports = [second]  # the first scrolled out of sight after the update
    assert watch.done
    watch.armed = False
    assert not watch.done
    watch.remove()
