"""PNG pictures: the asked size and DPI, colours that follow the values, masked cells grey."""

import numpy as np
import pytest
from PySide6.QtGui import QImage

from attention_explorer.core.stage_colours import MASKED_RGB
from attention_explorer.display.cells import cell_rgb
from attention_explorer.exporting import ExportError, export_heads_grid, export_stage
from attention_explorer.exporting.colors import lookup_table
from attention_explorer.exporting.figure import grid_figure, stage_figure
from attention_explorer.exporting.painter import heatmap_rects


def _pixel(image: QImage, x: float, y: float) -> tuple[int, int, int]:
    color = image.pixelColor(int(x), int(y))
    return color.red(), color.green(), color.blue()


def test_png_has_the_asked_size_and_dpi(pizza, tmp_path):
    path = export_stage(pizza, "weights", 0, tmp_path / "w.png", size=(800, 600), dpi=200)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage(str(path))
    assert (image.width(), image.height()) == (800, 600)
    assert abs(image.dotsPerMeterX() * 0.0254 - 200) < 0.5
    assert abs(image.dotsPerMeterY() * 0.0254 - 200) < 0.5


def test_cells_with_different_values_have_different_colours(trace_factory, tmp_path):
    trace = trace_factory(n=4, d=3, seed=3)
    size, dpi = (900, 700), 120
    path = export_stage(
        trace,
        "scores",
        0,
        tmp_path / "s.png",
        size=size,
        dpi=dpi,
        show_values=False,
        cmap="viridis",
    )
    image = QImage(str(path))
    values = trace.stage("scores", 0)
    fig = stage_figure(trace, "scores", 0, cmap="viridis", show_values=False)
    (rect,) = heatmap_rects(fig, size, dpi)
    low, high = fig.levels
    expected = cell_rgb(
        (values - low) / (high - low), ~np.isfinite(values), lookup_table("viridis")
    )
    rows, cols = values.shape
    seen = {}
    for i in range(rows):
        for j in range(cols):
            x = rect.x() + (j + 0.5) * rect.width() / cols
            y = rect.y() + (i + 0.5) * rect.height() / rows
            got = _pixel(image, x, y)
            assert np.abs(np.array(got) - expected[i, j]).max() <= 3, (i, j, got)
            seen[(i, j)] = got
    distinct = {round(float(v), 3) for v in values.ravel()}
    assert len(set(seen.values())) >= len(distinct) - 1  # 256 colours: near-ties may share one
    hi = np.unravel_index(np.argmax(values), values.shape)
    lo = np.unravel_index(np.argmin(values), values.shape)
    assert seen[hi] != seen[lo]


def test_masked_cells_are_the_screen_grey(trace_factory, tmp_path):
    trace = trace_factory(n=3, mask="causal", seed=1)
    size, dpi = (900, 900), 100
    path = export_stage(trace, "masked", 0, tmp_path / "m.png", size=size, dpi=dpi)
    image = QImage(str(path))
    fig = stage_figure(trace, "masked", 0)
    assert fig.has_masked
    (rect,) = heatmap_rects(fig, size, dpi)
    cw, ch = rect.width() / 3, rect.height() / 3
    # cell (0, 2) is hidden by the causal mask: MASKED_RGB, as on screen (away from its text)
    x0, y0 = rect.x() + 2 * cw, rect.y()
    for fx in (0.15, 0.85):
        assert _pixel(image, x0 + fx * cw, y0 + 0.15 * ch) == MASKED_RGB
    # a visible cell is coloured (CET-D1 is blue..red)
    r, g, b = _pixel(image, rect.x() + 0.2 * cw, rect.y() + 0.5 * ch)
    assert max(r, g, b) - min(r, g, b) > 10 or abs(float(trace.stage("masked", 0)[0, 0])) < 0.2


def test_colour_map_changes_the_picture(pizza, tmp_path):
    a = export_stage(pizza, "weights", 0, tmp_path / "a.png", cmap="viridis", size=(400, 300))
    b = export_stage(pizza, "weights", 0, tmp_path / "b.png", cmap="magma", size=(400, 300))
    assert QImage(str(a)) != QImage(str(b))


def test_large_matrix_is_downsampled_and_quick(trace_factory, tmp_path):
    import time

    trace = trace_factory(n=600, d=4, mask="causal", seed=2)
    started = time.perf_counter()
    path = export_stage(trace, "weights", 0, tmp_path / "big.png", size=(1000, 800))
    assert time.perf_counter() - started < 10
    fig = stage_figure(trace, "weights", 0)
    assert fig.panels[0].values.shape == (300, 300)
    assert fig.title == "softmax weights · head 0 · 600×600 shown as 300×300, max of 2×2 blocks"
    assert not fig.show_values
    assert QImage(str(path)).size().width() == 1000


def test_heads_grid_has_one_panel_per_head_on_one_scale(four_heads, tmp_path):
    path = export_heads_grid(four_heads, tmp_path / "grid.png", size=(1000, 800))
    assert QImage(str(path)).width() == 1000
    fig = grid_figure(four_heads)
    assert [p.title for p in fig.panels] == ["head 0", "head 1", "head 2", "head 3"]
    assert fig.levels == (0.0, 1.0)
    rects = heatmap_rects(fig, (1000, 800), 150)
    assert len(rects) == 4
    for a in range(4):
        for b in range(a + 1, 4):
            assert not rects[a].intersects(rects[b])
    for rect in rects:
        assert (
            0 <= rect.left() and rect.right() <= 1000 and 0 <= rect.top() and rect.bottom() <= 800
        )


STAGES = ["scores", "scaled", "masked", "weights", "head_outputs", "concat", "output", "mask"]


@pytest.mark.parametrize("stage", [*STAGES, "Q", "K", "V"])
def test_every_stage_renders_inside_the_canvas(four_heads, stage, tmp_path):
    path = export_stage(four_heads, stage, 2, tmp_path / f"{stage}.png", size=(640, 480), dpi=96)
    assert QImage(str(path)).size().height() == 480
    fig = stage_figure(four_heads, stage, 2)
    (rect,) = heatmap_rects(fig, (640, 480), 96)
    assert rect.width() > 100 and rect.height() > 60
    assert rect.left() > 0 and rect.right() < 640 and rect.top() > 0 and rect.bottom() < 480


def test_bad_size_is_refused(pizza, tmp_path):
    with pytest.raises(ExportError, match="size"):
        export_stage(pizza, "weights", 0, tmp_path / "w.png", size=(10, 10))
    assert list(tmp_path.iterdir()) == []


def test_render_stage_image_for_the_clipboard(pizza):
    from attention_explorer.exporting import render_stage_image

    image = render_stage_image(pizza, "weights", 0, size=(500, 400))
    assert (image.width(), image.height()) == (500, 400)
    assert not image.isNull()
