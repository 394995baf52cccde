"""Handouts (issue 31, item 6): every page frames the followed row and cell, --head and
--query choose what is followed, the narration speaks to paper, and 19-token maps get a page
width each."""

import numpy as np
import pytest
from PySide6.QtGui import QImage, QPainter

from attention_explorer import api
from attention_explorer.cli.commands import UsageError
from attention_explorer.cli.handout_command import HANDOUT_ARGUMENTS, cmd_handout, followed
from attention_explorer.exporting.figure import stage_figure
from attention_explorer.exporting.handout import (
    export_handout,
    for_paper,
    marks_for,
    stacked,
    step_stages,
)
from attention_explorer.exporting.painter import heatmap_rects, paint_figure
from attention_explorer.walkthrough.follow import session_steps


@pytest.fixture(scope="module")
def starter():
    data = api.example("starter")
    trace = api.compute(data)
    steps, _ = session_steps(trace, data)
    return data, trace, steps


def test_every_page_with_a_map_frames_the_followed_row_or_cell(qapp, starter):
    _, trace, steps = starter
    pictured = [st for st in steps if step_stages(st)]
    assert len(pictured) >= 8
    for step in pictured:
        for stage, _head in step_stages(step):
            if trace.has(stage):
                assert marks_for(trace, step, stage), (step.key, stage)
    weights = next(st for st in steps if st.key == "weights")
    row, col = weights.selection or weights.cells[0]
    assert (col, row, 1, 1, True) in marks_for(trace, weights, "weights")  # the cell, bold
    assert (0, row, 4, 1, False) in marks_for(trace, weights, "weights")  # and its row


def _painted(fig, marks):
    image = QImage(900, 700, QImage.Format.Format_RGB32)
    image.setDotsPerMeterX(round(150 / 0.0254))
    image.setDotsPerMeterY(round(150 / 0.0254))
    painter = QPainter(image)
    paint_figure(painter, fig, 900, 700, 150, marks)
    painter.end()
    return image


def test_the_marks_are_painted_over_the_followed_cell(qapp, starter):
    _, trace, steps = starter
    weights = next(st for st in steps if st.key == "weights")
    fig = stage_figure(trace, "weights", weights.head)
    plain = _painted(fig, ())
    marked = _painted(fig, marks_for(trace, weights, "weights"))
    (rect,) = heatmap_rects(fig, (900, 700), 150)
    row, col = weights.selection or weights.cells[0]
    cw, ch = rect.width() / 4, rect.height() / 4
    x, y = int(rect.x() + col * cw), int(rect.y() + row * ch + ch / 2)  # the cell's left edge
    changed = [plain.pixelColor(x + d, y) != marked.pixelColor(x + d, y) for d in range(-3, 4)]
    assert any(changed)
    far = (int(rect.x() + 3.5 * cw), int(rect.y() + 0.5 * ch))  # a cell of another row
    if row != 0 and col != 3:
        assert plain.pixelColor(*far) == marked.pixelColor(*far)


def test_the_narration_speaks_to_paper(starter):
    _, _, steps = starter
    about = for_paper(steps[0].text)
    assert "Press" not in about and "Next" not in about and "Select another cell" not in about
    assert "The pages that follow trace the query" in about
    for step in steps:
        assert "Press <b>Next</b>" not in for_paper(step.text)


def _args(tmp_path, **more):
    from attention_explorer.cli.parsers import build_parser

    flags = [x for key, value in more.items() for x in (f"--{key}", str(value))]
    return build_parser().parse_args(
        ["handout", "--example", "starter", "--out", str(tmp_path / "w.pdf"), *flags]
    )


def test_head_and_query_choose_what_the_handout_follows(qapp, tmp_path, starter, capsys):
    _, trace, _ = starter
    follow = followed(trace, 1, "cat")
    data = api.example("starter")
    steps, _ = session_steps(trace, data, follow)
    scores = next(st for st in steps if st.key == "scores")
    assert scores.head == 1 and scores.cells[0][0] == list(trace.tokens).index("cat")
    assert followed(trace, None, "0").row == 0
    with pytest.raises(UsageError, match="heads 0 to 1"):
        followed(trace, 5, None)
    with pytest.raises(UsageError, match="not a token"):
        followed(trace, None, "zebra")
    flags = {names[0] for names, _ in HANDOUT_ARGUMENTS}
    assert {"--head", "--query", "--out"} <= flags
    rc = cmd_handout(_args(tmp_path, head=1, query="cat"))
    assert rc == 0 and (tmp_path / "w.pdf").read_bytes().startswith(b"%PDF")


def test_maps_of_19_tokens_get_the_page_width_each(qapp, tmp_path):
    data = api.example("tiny-induction-copy")
    trace = api.compute(data)
    steps, _ = session_steps(trace, data)
    assert len(trace.tokens) == 19
    wide = [st for st in steps if len(step_stages(st)) > 1]
    assert wide and all(stacked(trace, st) for st in wide)
    path = export_handout(trace, steps, tmp_path / "ind.pdf", name=data.name)
    pdf = path.read_bytes()
    boxes = {tuple(np.round(list(map(float, m)))) for m in _media_boxes(pdf)}
    assert len(boxes) == 2  # A4 landscape, and taller pages where the maps are stacked
    data = api.example("starter")
    st_trace = api.compute(data)
    st_steps, _ = session_steps(st_trace, data)
    assert not any(stacked(st_trace, st) for st in st_steps)


def _media_boxes(pdf: bytes):
    import re

    return [m.groups() for m in re.finditer(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf)]
