"""FastImageItem: the same pixels as pyqtgraph's ImageItem, kept as premultiplied ARGB32."""

import inspect
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from attention_explorer.ui.heatmap.fast_image import FastImageItem  # noqa: E402
from attention_explorer.ui.widgets.colormaps import colormap_by_name  # noqa: E402


def _pixels(image: QImage) -> np.ndarray:
    """``[height, width, 4]`` bytes of ``image`` as ARGB32."""
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    shape = (image.height(), image.width(), 4)
    return np.frombuffer(image.constBits(), np.uint8).reshape(shape).copy()  # outlives image


def _rendered(item_type, values, **kwargs) -> QImage:
    item = item_type(axisOrder="row-major")
    item.setImage(values, autoLevels=False, **kwargs)
    item.render()
    return item.qimage


@pytest.mark.parametrize("alpha", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_heatmap_renders_to_the_same_colours_in_the_fast_format(qapp, alpha, dtype):
    values = np.linspace(-2.0, 3.0, 600, dtype=dtype).reshape(20, 30)  # [r, c], some clipped
    lut = colormap_by_name("viridis").getLookupTable(0.0, 1.0, nPts=256, alpha=alpha)
    ours = _rendered(FastImageItem, values, levels=(-1.0, 2.0), lut=lut)
    theirs = _rendered(pg.ImageItem, values, levels=(-1.0, 2.0), lut=lut)
    assert theirs.format() == QImage.Format.Format_Indexed8  # what the item saves a paint of
    assert ours.format() == QImage.Format.Format_ARGB32_Premultiplied
    np.testing.assert_array_equal(_pixels(ours), _pixels(theirs))
    assert len(np.unique(_pixels(ours).reshape(-1, 4), axis=0)) > 200  # many colours compared


def test_a_table_with_transparency_or_nan_cells_render_as_pyqtgraph_does(qapp):
    values = np.arange(12, dtype=np.float64).reshape(3, 4)  # [r, c]
    lut = colormap_by_name("viridis").getLookupTable(0.0, 1.0, nPts=256, alpha=True)
    lut[:10, 3] = 0  # transparent low end
    for image in (values, np.where(values == 5, np.nan, values)):
        ours = _rendered(FastImageItem, image, levels=(0.0, 11.0), lut=lut)
        theirs = _rendered(pg.ImageItem, image, levels=(0.0, 11.0), lut=lut)
        assert ours.format() == QImage.Format.Format_ARGB32_Premultiplied
        want = theirs.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
        np.testing.assert_array_equal(_pixels(ours), _pixels(want))


def test_transparent_cells_stay_transparent(qapp):
    overlay = np.zeros((3, 3, 4), np.uint8)  # [r, c, rgba]
    overlay[1, 2] = (200, 200, 200, 255)
    ours = _pixels(_rendered(FastImageItem, overlay, levels=(0, 255)))
    assert ours[1, 2, 3] == 255 and ours[0, 0, 3] == 0
    np.testing.assert_array_equal(ours, _pixels(_rendered(pg.ImageItem, overlay, levels=(0, 255))))


def test_pyqtgraphs_render_still_uses_the_private_flags_the_fast_path_sets(qapp):
    """The fast path sets ImageItem's private ``_renderRequired`` and ``_unrenderable`` as
    pyqtgraph's own render() does; a pyqtgraph that renames them must fail here, not draw
    stale pictures (pyproject.toml bounds pyqtgraph to the tested range)."""
    source = inspect.getsource(pg.ImageItem.render)
    assert "self._renderRequired = False" in source
    assert "self._unrenderable = False" in source
    item = pg.ImageItem(np.zeros((2, 2), np.float32), axisOrder="row-major")
    assert item._renderRequired is True and item._unrenderable is False
