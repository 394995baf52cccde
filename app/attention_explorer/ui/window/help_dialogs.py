"""Help > About and Help > Formula reference."""
# ruff: noqa: E501  (the formula table is HTML prose)

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from attention_explorer._version import __version__

FORMULAS = """
<h3>Scaled dot-product attention, stage by stage</h3>
<table cellpadding="4">
<tr><td><b>Projections</b></td><td>Q = X W<sub>Q</sub>, K = X W<sub>K</sub>, V = X W<sub>V</sub>
  (one block of columns per head; X may include positional encodings)</td></tr>
<tr><td><b>Scores</b></td><td>S = Q K<sup>T</sup> — row i, column j is q<sub>i</sub> · k<sub>j</sub></td></tr>
<tr><td><b>Scaled</b></td><td>S × scale / T, with scale = 1/√d<sub>k</sub> by default and
  temperature T = 1</td></tr>
<tr><td><b>Masked</b></td><td>hidden keys become −∞ (causal: keys after the query; padding: pad keys;
  custom: your choice)</td></tr>
<tr><td><b>Weights</b></td><td>softmax over each row: exp(s<sub>j</sub> − max) / Σ exp(s − max).
  Sparsemax gives exact zeros; sigmoid scores each key on its own.
  A row with every key hidden gets weights 0.</td></tr>
<tr><td><b>Head output</b></td><td>A V — each query's weighted average of the value rows</td></tr>
<tr><td><b>Concat</b></td><td>[head<sub>0</sub> | head<sub>1</sub> | …], n × h·d<sub>v</sub></td></tr>
<tr><td><b>Output</b></td><td>Concat · W<sub>O</sub></td></tr>
</table>
<p>Rows are queries, columns are keys, in every heatmap. Hover a cell to see its arithmetic.</p>
"""


def show_about(parent: QWidget) -> None:
    """The About box, with the version."""
    QMessageBox.about(
        parent,
        "About Attention Explorer",
        f"<h3>Attention Explorer {__version__}</h3>"
        "<p>Type any number of an attention computation and watch every stage change.</p>"
        "<p>Engine: numpy, or torch on CPU or GPU when installed.</p>",
    )


def show_formulas(parent: QWidget) -> None:
    """The formula reference."""
    box = QMessageBox(parent)
    box.setWindowTitle("Formula reference")
    box.setText(FORMULAS)
    box.setIcon(QMessageBox.Icon.NoIcon)
    box.exec()
