"""The logit lens: what the model would predict if it stopped after each layer.

Rows are the residual after the embeddings and after each layer, columns the positions of the
clean prompt; each cell holds the top token (plain text) and its probability
(``causal.logit_lens``), shaded by that probability or by the rank of the model's final
answer at that position (1 / rank: the final answer on top reads 1). A click lists the
cell's ten best tokens beside the map.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QWidget

from attention_explorer.core.stage_colours import DEFAULT_SEQUENTIAL
from attention_explorer.pretrained.run_model import WINDOW_THREADS
from attention_explorer.ui.why.cell_map import CellMap
from attention_explorer.ui.why.why_jobs import JobControls, backend_of
from attention_explorer.ui.widgets import layout_parts as parts

SHADES = {
    "probability": "the top token's probability",
    "rank": "the rank of the final answer (1 / rank)",
}
_RANK_TICKS = [(1.0, "1st"), (0.5, "2nd"), (0.2, "5th"), (0.1, "10th")]


class LensView(QWidget):
    """The logit lens of the shared clean prompt (``inputs``) on model mode's ``state``;
    ``result`` is the last :class:`~attention_explorer.causal.LensResult`."""

    def __init__(self, state, inputs, parent: QWidget | None = None):
        super().__init__(parent)
        self.state, self.inputs = state, inputs
        self.result = None
        self.shade_box = QComboBox()
        for key, words in SHADES.items():
            self.shade_box.addItem(words, key)
        self.controls = JobControls("logit lens", "Read the lens")
        self.map = CellMap()
        self.map.show_message(
            "Read the lens: each row is what the model would predict if it stopped there."
        )
        self.top = parts.plain_label("Click a cell for its ten best tokens.")
        self.top.setMinimumWidth(190)
        self.summary = parts.plain_label()
        parts.column(
            self,
            parts.form(("Shade by", self.shade_box)),
            self.controls,
            (parts.row((self.map, 1), self.top), 1),
            self.summary,
        )
        self.controls.start_requested.connect(self.start)
        self.controls.finished.connect(self.show_result)
        self.shade_box.currentIndexChanged.connect(lambda *_: self._draw())
        self.map.cell_clicked.connect(self.show_top)

    def start(self) -> bool:
        """Run the lens on the clean prompt on a worker thread."""
        from attention_explorer.causal import logit_lens

        loaded, text = self.state.loaded, self.inputs.clean
        if loaded is None or not text.strip():
            self.controls.refuse("Load a model and type the clean prompt first")
            return False
        options = {"backend": backend_of(self.state), "threads": WINDOW_THREADS}
        self.controls.run_job(
            lambda progress, cancelled: logit_lens(loaded, text, **options),
            None,
            "reading the logit lens",
        )
        return True

    def show_result(self, result) -> None:
        """Draw a finished lens."""
        self.result = result
        self._draw()
        final = [cell[0] for cell in result.top_texts[-1]]
        self.summary.setText(
            f"{result.model}: the final answers are {' · '.join(final)}. "
            f"Read in {result.seconds:.2f} s."
        )

    def _draw(self) -> None:
        r = self.result
        if r is None:
            return
        prob = np.asarray(r.top_prob, np.float64)  # [layers + 1, positions]
        texts = [
            [f"{row[p][0]}\n{prob[i, p]:.2f}" for p in range(prob.shape[1])]
            for i, row in enumerate(r.top_texts)
        ]
        cols = [f"{i} {t}" for i, t in enumerate(r.tokens)]
        if self.shade_box.currentData() == "rank":
            ranks = np.asarray(r.final_ranks())  # [layers + 1, positions]
            shade, ticks = 1.0 / (ranks + 1.0), _RANK_TICKS
            title = "top token and its probability; shaded by the final answer's rank"
        else:
            shade, ticks = prob, None
            title = "top token and its probability after each layer"
        self.map.set_map(
            prob,
            r.row_labels,
            cols,
            title=title,
            levels=(0.0, 1.0),
            cmap=DEFAULT_SEQUENTIAL,
            shade=shade,
            texts=texts,
            hover=self.hover_text,
            bar_ticks=ticks,
        )

    def hover_text(self, row: int, col: int) -> str:
        """Cell (row, col) in words: the top token, and where the final answer stands."""
        r = self.result
        rank = int(np.asarray(r.final_ranks())[row, col])
        answer = r.top_texts[-1][col][0]
        answer_id = int(r.top_ids[-1, col, 0])
        p_answer = float(np.exp(np.float64(r.log_probs[row, col, answer_id])))
        return (
            f"{r.row_labels[row]}, position {col} ({r.tokens[col]}): top token "
            f"{r.top_texts[row][col][0]} with p = {r.top_prob[row, col]:.4f}; the final answer "
            f"{answer} is ranked {rank + 1} here (p = {p_answer:.4g})"
        )

    def top_lines(self, row: int, col: int) -> list[str]:
        """The ten best tokens of cell (row, col), one line each."""
        r = self.result
        return [
            f"{k + 1:>2}. {token}   {float(r.top_probs[row, col, k]):.4f}"
            for k, token in enumerate(r.top_texts[row][col])
        ]

    def show_top(self, row: int, col: int) -> None:
        """List cell (row, col)'s ten best tokens beside the map."""
        if self.result is None:
            return
        head = f"{self.result.row_labels[row]}, position {col} ({self.result.tokens[col]}):"
        self.top.setText("\n".join([head, *self.top_lines(row, col)]))
