"""Labels that can be read (issue 31, item 5): up to 32 tokens every column is named in full
where staggering gives the room (names are cut only when even 6 lines do not fit); the
hidden-state movement map names every token and "embeddings" whole; the next-token strip
names every position where the dock allows."""

import numpy as np
from PySide6.QtGui import QFont

from attention_explorer.ui.heatmap.heatmap_labels import MIN_POINTS, fitting_font
from attention_explorer.ui.model.model_output import _Map

MINILM = ("[CLS]", "the", "french", "cat", "sat", "during", "the", "storm", "because",
          "it", "was", "tired", "[SEP]")  # fmt: skip
INDUCTION = (
    "owl hen pig lion bear wolf frog duck goat swan crab lion bear wolf frog duck goat swan crab"
)


def test_column_names_are_staggered_whole_before_they_are_cut():
    base = QFont()
    base.setPointSizeF(9.0)
    # 26 px a column (a 13-token map about 340 px wide): cut to 3 characters, the names would
    # fit on one line, as they did ("fr…", "du…"); staggered they fit whole
    font, chars, levels = fitting_font(MINILM, 26.0, True, base)
    assert chars >= max(map(len, MINILM))  # every name whole ...
    assert levels > 1 and font.pointSizeF() >= MIN_POINTS  # ... on staggered lines


def _map(qtbot, height, width):
    view = _Map("magma", height)
    qtbot.addWidget(view)
    view.resize(width, height + 20)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_the_movement_map_names_every_token_and_embeddings_whole(qtbot):
    view = _map(qtbot, 170, 420)
    rows = ["embeddings", *(f"layer {k}" for k in range(6))]
    values = np.linspace(0, 1, len(rows) * len(MINILM)).reshape(len(rows), len(MINILM))
    view.draw(values, rows, MINILM, (0.0, 1.0))
    qtbot.wait(50)
    view.draw(values, rows, MINILM, (0.0, 1.0))
    assert view.names("left") == rows  # "embeddings", not "embeddin…"
    assert view.names("bottom") == list(MINILM)


def test_the_next_token_strip_names_every_position(qtbot):
    tokens = INDUCTION.split()[1:]  # the strip's 18 next tokens
    view = _map(qtbot, 110, 640)
    values = np.linspace(0, 1, 2 * len(tokens)).reshape(2, len(tokens))
    view.draw(values, ["before", "after"], tokens, (0.0, 1.0))
    qtbot.wait(50)
    view.draw(values, ["before", "after"], tokens, (0.0, 1.0))
    assert view.names("bottom") == tokens
