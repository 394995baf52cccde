"""The Why? dialog's map (ui/why/cell_map.py) and job strip (ui/why/why_jobs.py), driven as
widgets with made-up arrays: values written in the cells, a diverging scale centred on 0,
the colour of a cell on screen, hover words as plain text, a click naming its cell; the
estimate that asks before a long job, progress, and Cancel stopping a job on its thread."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from attention_explorer.causal import PatchCancelled
from attention_explorer.ui.why.cell_map import CellMap, colours_of, signed_levels
from attention_explorer.ui.why.why_jobs import ASK_ABOVE_S, JobControls

VALUES = np.array([[0.0, 1.0, -0.5], [0.25, -1.0, 2.0]])  # [layers, positions]


@pytest.fixture
def cell_map(qtbot):
    view = CellMap()
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.set_map(VALUES, ["layer 0", "layer 1"], ["0 <b>cat</b>", "1 dog", "2 fox"], title="t")
    view.show()
    qtbot.waitExposed(view)
    return view


def test_a_diverging_scale_is_centred_on_zero():
    assert signed_levels(VALUES) == (-2.0, 2.0)
    assert signed_levels(np.array([[0.2, -0.1]]), floor=1.0) == (-1.0, 1.0)
    assert signed_levels(np.zeros((2, 2))) == (-1.0, 1.0)  # never a zero-width scale
    rgb = colours_of(np.array([[-2.0, 0.0, 2.0]]), (-2.0, 2.0), "CET-D1")  # [1, 3, 3]
    low, middle, high = (rgb[0, i].astype(int) for i in range(3))
    assert low[2] > low[0] and high[0] > high[2]  # blue below 0, red above
    assert middle.min() > 200  # 0 is the map's pale middle
    assert tuple(colours_of(np.array([[np.nan]]), (-1, 1), "CET-D1")[0, 0]) == (160, 160, 160)


def test_the_cells_hold_their_values_and_colours(cell_map):
    assert cell_map.levels == (-2.0, 2.0)
    assert cell_map.texts == [["0", "1", "−0.5"], ["0.25", "−1", "2"]]
    image = cell_map.grab().toImage()
    for row, col in ((0, 1), (1, 1), (1, 2)):
        rect = cell_map.cell_rect(row, col)
        corner = image.pixelColor(rect.left() + 3, rect.top() + 3)  # clear of the text
        expected = colours_of(VALUES, cell_map.levels, "CET-D1")[row, col]
        assert (corner.red(), corner.green(), corner.blue()) == tuple(int(v) for v in expected)


def test_hover_names_the_cell_in_plain_words(qtbot, cell_map):
    seen = []
    cell_map.hovered.connect(lambda r, c: seen.append((r, c)))
    qtbot.mouseMove(cell_map, cell_map.cell_rect(1, 2).center())
    qtbot.waitUntil(lambda: seen == [(1, 2)])
    assert cell_map.last_hover == "layer 1, 2 fox: 2"
    qtbot.mouseMove(cell_map, cell_map.cell_rect(0, 0).center())
    qtbot.waitUntil(lambda: len(seen) == 2)
    assert cell_map.last_hover == "layer 0, 0 <b>cat</b>: 0"  # the markup stays literal


def test_a_click_names_its_cell_and_outside_the_cells_nothing(qtbot, cell_map):
    clicks = []
    cell_map.cell_clicked.connect(lambda r, c: clicks.append((r, c)))
    for row, col in ((0, 2), (1, 0)):
        qtbot.mouseClick(
            cell_map, Qt.MouseButton.LeftButton, pos=cell_map.cell_rect(row, col).center()
        )
    qtbot.mouseClick(cell_map, Qt.MouseButton.LeftButton, pos=QPoint(2, 2))
    assert clicks == [(0, 2), (1, 0)]
    assert cell_map.cell_at(QPoint(2, 2)) is None


def test_a_map_refuses_labels_that_do_not_match(cell_map):
    with pytest.raises(ValueError, match="2 row and 2 column labels for a 2x3 map"):
        cell_map.set_map(VALUES, ["a", "b"], ["x", "y"])


def _slow_work(steps: int = 400):
    started = threading.Event()

    def work(progress, cancelled):
        started.set()
        for i in range(steps):
            if cancelled():
                raise PatchCancelled()
            progress(i + 1, steps)
            time.sleep(0.005)
        return "done"

    return work, started


def test_cancel_stops_the_job_on_its_thread(qtbot):
    controls = JobControls("patching", "Patch")
    qtbot.addWidget(controls)
    work, started = _slow_work()
    controls.run_job(work, None, "patching every site")
    assert not controls.start_button.isEnabled() and controls.cancel_button.isEnabled()
    qtbot.waitUntil(started.is_set)
    qtbot.waitUntil(lambda: controls.bar.value() > 0)
    with qtbot.waitSignal(controls.failed, timeout=5000) as failed:
        qtbot.mouseClick(controls.cancel_button, Qt.MouseButton.LeftButton)
    assert failed.args == ["the patching was cancelled"]
    assert controls.note.text() == "The patching was cancelled"
    assert controls.start_button.isEnabled() and not controls.cancel_button.isEnabled()


def test_a_long_estimate_asks_before_starting(qtbot):
    controls = JobControls("patching", "Patch")
    qtbot.addWidget(controls)
    ran = []
    with qtbot.waitSignal(controls.worker.estimated, timeout=5000):
        controls.run_job(lambda p, c: ran.append(1) or "ok", lambda: ASK_ABOVE_S * 3, "patching")
    assert controls.start_button.text() == "Start anyway" and ran == []
    assert "about 30 s" in controls.note.text()
    with qtbot.waitSignal(controls.finished, timeout=5000) as finished:
        qtbot.mouseClick(controls.start_button, Qt.MouseButton.LeftButton)
    assert finished.args == ["ok"] and ran == [1]
    assert controls.start_button.text() == "Patch"


def test_a_short_estimate_starts_at_once_and_an_error_is_one_line(qtbot):
    controls = JobControls("lens", "Read")
    qtbot.addWidget(controls)
    with qtbot.waitSignal(controls.finished, timeout=5000) as finished:
        controls.run_job(lambda p, c: 42, lambda: 0.01, "reading")
    assert finished.args == [42]

    def broken(progress, cancelled):
        raise ZeroDivisionError("division by zero")

    with qtbot.waitSignal(controls.failed, timeout=5000) as failed:
        controls.run_job(broken, None, "reading")
    assert failed.args == ["the lens stopped: ZeroDivisionError: division by zero"]
