"""'Export all': every stage and head into a folder, with predictable names."""

import numpy as np
from PySide6.QtGui import QImage

from attention_explorer.exporting import export_all, plan_exports, read_csv_matrix


def test_names_are_predictable(four_heads, tmp_path):
    written = export_all(four_heads, tmp_path, formats=("png", "csv"))
    names = {p.name for p in written}
    assert names == {p.name for p in tmp_path.iterdir()}
    for stage in ("Q", "K", "V", "scores", "scaled", "masked", "weights", "head_outputs"):
        for head in range(4):
            assert f"{stage}_head{head}.png" in names and f"{stage}_head{head}.csv" in names
    for shared in ("concat", "output", "mask"):
        assert f"{shared}.png" in names and f"{shared}.csv" in names
    assert "weights_grid.png" in names and "weights_grid.csv" not in names
    assert not any(n.startswith(".") for n in names)
    _, _, values = read_csv_matrix(tmp_path / "output.csv")
    np.testing.assert_array_equal(values.astype(np.float32), four_heads["output"])


def test_chosen_stages_heads_and_formats(four_heads, tmp_path):
    written = export_all(
        four_heads,
        tmp_path,
        formats="svg,npy,npz",
        stages="weights,concat",
        heads=[1, 3],
        size=(600, 450),
    )
    assert sorted(p.name for p in written) == sorted(
        [
            "weights_head1.svg",
            "weights_head3.svg",
            "weights_grid.svg",
            "concat.svg",
            "weights_head1.npy",
            "weights_head3.npy",
            "concat.npy",
            "trace.npz",
        ]
    )


def test_single_head_has_no_grid_unless_asked(pizza, tmp_path):
    plan = [name for name, *_ in plan_exports(pizza, "weights", "all", "png")]
    assert plan == ["weights_head0.png"]
    plan = [name for name, *_ in plan_exports(pizza, "weights", "all", "png", grid=True)]
    assert plan == ["weights_head0.png", "weights_grid.png"]


def test_pictures_have_the_asked_size(four_heads, tmp_path):
    export_all(four_heads, tmp_path, formats="png", stages="scores", size=(500, 400), dpi=72)
    for path in tmp_path.iterdir():
        image = QImage(str(path))
        assert (image.width(), image.height()) == (500, 400), path.name
