"""Look: the one declaration of a picture's options, shared by every export function."""

from __future__ import annotations

import pytest

from attention_explorer.exporting import ExportError, export_heads_grid, export_stage
from attention_explorer.exporting.figure import Look, grid_figure, stage_figure


def test_every_export_function_names_an_unknown_option(pizza, four_heads, tmp_path):
    with pytest.raises(TypeError, match="unknown picture option cmapp; use title, name, .*, dpi"):
        export_stage(pizza, "weights", 0, tmp_path / "w.png", cmapp="magma")
    with pytest.raises(TypeError, match="unknown picture option colour, tilte"):
        export_heads_grid(four_heads, tmp_path / "g.png", tilte="x", colour="red")
    with pytest.raises(TypeError, match="unknown picture option"):
        stage_figure(pizza, "weights", 0, size=(10, 10))
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("bad", [-1, 13, 2.5, True, "3"])
def test_decimals_are_a_whole_number_from_0_to_12(pizza, four_heads, bad):
    with pytest.raises(ExportError, match="decimals must be a whole number from 0 to 12"):
        stage_figure(pizza, "weights", 0, decimals=bad)
    with pytest.raises(ExportError, match="decimals must be a whole number from 0 to 12"):
        grid_figure(four_heads, decimals=bad)
    assert Look(decimals=12).checked_decimals() == 12 and Look().checked_decimals() is None


def test_the_look_reaches_the_figure(pizza, four_heads):
    fig = stage_figure(pizza, "scores", 0, title="Mine", cmap="magma", show_values=False)
    assert (fig.title, fig.cmap, fig.show_values) == ("Mine", "magma", False)
    assert stage_figure(pizza, "scores", 0).cmap == "CET-D1"  # the stage's own map
    grid = grid_figure(four_heads, "weights", name="Pizza")
    assert grid.title.endswith("· Pizza") and grid.cmap == "viridis"
    with pytest.raises(ExportError, match="unknown colour map"):
        Look(cmap="rainbowz").chosen_cmap("weights")
