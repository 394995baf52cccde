"""Patch from a second prompt: copy one activation at a time from the clean run into the
corrupted run and map how much of the answer comes back.

The map is layers x positions (``resid_pre``, ``attn_out``) or layers x heads (``head_out``,
``pattern``), each cell ``(m(patched) − m(corrupted)) / (m(clean) − m(corrupted))`` with
``m = logit[answer] − logit[wrong]`` at the last position (``causal.patch``), on a diverging
scale centred on 0 (at least ±1, so 1 = "all of it restored" always reads the same). A hover
gives the cell's words and its raw metric; a click opens that layer (and head) in the
explorer. The estimate, progress and Cancel are :class:`~.why_jobs.JobControls`'.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QWidget

from attention_explorer.core.numbers import format_number
from attention_explorer.pretrained.run_model import WINDOW_THREADS
from attention_explorer.ui.why.cell_map import CellMap, signed_levels
from attention_explorer.ui.why.why_jobs import JobControls, backend_of
from attention_explorer.ui.widgets import layout_parts as parts

#: The sites, in words, in the order the box offers them.
SITE_WORDS = {
    "resid_pre": "residual stream entering each layer, per position",
    "attn_out": "attention block's output, per position",
    "head_out": "each head's output (all positions)",
    "pattern": "each head's attention weights (all positions)",
}


def _n(value: float) -> str:
    return format_number(value, 4, display=True)


class PatchView(QWidget):
    """The patching view over model mode's ``state`` and the shared prompts ``inputs``.
    ``open_requested(layer, head)`` when a cell is clicked; ``result`` is the last map."""

    open_requested = Signal(int, int)

    def __init__(self, state, inputs, parent: QWidget | None = None):
        super().__init__(parent)
        self.state, self.inputs = state, inputs
        self.result = None
        self.site_box = QComboBox()
        for site, words in SITE_WORDS.items():
            self.site_box.addItem(f"{site}: {words}", site)
        self.controls = JobControls("patching", "Patch")
        self.map = CellMap()
        self.map.show_message(
            "Type a clean prompt and a corrupted one with as many tokens, pick the answer and "
            "the wrong token, then Patch: each cell says how much of the clean answer comes "
            "back when that one activation is copied from the clean run into the corrupted one."
        )
        self.summary = parts.plain_label()
        parts.column(
            self,
            parts.form(("Site", self.site_box)),
            self.controls,
            (self.map, 1),
            self.summary,
        )
        self.controls.start_requested.connect(self.start)
        self.controls.finished.connect(self.show_result)
        self.map.cell_clicked.connect(self._on_click)

    @property
    def site(self) -> str:
        """The site picked."""
        return self.site_box.currentData()

    def start(self) -> bool:
        """Estimate, then patch every cell of the site on a worker thread (False, with the
        reason in the note, when the prompts or tokens cannot be patched)."""
        from attention_explorer.causal import patch, patch_estimate

        loaded, inputs, site = self.state.loaded, self.inputs, self.site
        problem = ""
        if loaded is None:
            problem = "Load a model in the Model panel first"
        elif not inputs.clean.strip() or not inputs.corrupted.strip():
            problem = "Type both a clean and a corrupted prompt"
        elif inputs.lengths_problem():
            problem = inputs.lengths_problem()
        elif inputs.answer == "" or inputs.wrong == "":
            problem = "Pick an answer token and a wrong token"
        if problem:
            self.controls.refuse(problem[:1].upper() + problem[1:])
            return False
        clean, corrupted, answer, wrong = (
            inputs.clean,
            inputs.corrupted,
            inputs.answer,
            inputs.wrong,
        )
        options = {"backend": backend_of(self.state), "threads": WINDOW_THREADS}

        def work(progress, cancelled):
            return patch(
                loaded,
                clean,
                corrupted,
                site=site,
                answer=answer,
                wrong=wrong,
                progress=progress,
                cancelled=cancelled,
                **options,
            )

        def estimate():
            return patch_estimate(loaded, clean, site, **options)

        self.controls.run_job(work, estimate, f"patching every {site} site")
        return True

    def show_result(self, result) -> None:
        """Draw a finished :class:`~attention_explorer.causal.PatchResult`."""
        self.result = result
        values = np.asarray(result)  # [layers, positions | heads]
        rows = [f"layer {i}" for i in range(values.shape[0])]
        if result.axes[1] == "position":
            cols = [f"{i} {t}" for i, t in enumerate(result.tokens)]
        else:
            cols = [f"head {h}" for h in range(values.shape[1])]
        self.map.set_map(
            values,
            rows,
            cols,
            title=f"{result.site}: share of logit[{result.answer}] − logit[{result.wrong}] "
            "restored",
            levels=signed_levels(values, floor=1.0),
            hover=lambda r, c: self.hover_text(r, c),
        )
        layer, col = np.unravel_index(np.argmax(np.abs(values)), values.shape)
        at = f"position {col} ({result.tokens[col]})" if result.axes[1] == "position" else cols[col]
        self.summary.setText(
            f"m = logit[{result.answer}] − logit[{result.wrong}] at the last position: "
            f"{_n(result.clean_metric)} on the clean prompt, {_n(result.corrupted_metric)} on "
            f"the corrupted one. The largest effect: {rows[layer]}, {at} "
            f"({_n(values[layer, col])}). {values.size} patched runs in {result.seconds:.2f} s. "
            "Click a cell to open that layer in the explorer."
        )

    def hover_text(self, row: int, col: int) -> str:
        """The words of cell (row, col): where, the share restored and the raw metric."""
        r = self.result
        value, raw = float(np.asarray(r)[row, col]), float(r.patched_metric[row, col])
        if r.axes[1] == "position":
            where = f"position {col} ({r.tokens[col]} / corrupted {r.corrupted_tokens[col]})"
        else:
            where = f"head {col}"
        return (
            f"layer {row}, {where}: patching {r.site} here restores {_n(value)} of the "
            f"difference; logit[{r.answer}] − logit[{r.wrong}] = {_n(raw)} (clean "
            f"{_n(r.clean_metric)}, corrupted {_n(r.corrupted_metric)})"
        )

    def _on_click(self, row: int, col: int) -> None:
        if self.result is None:
            return
        head = col if self.result.axes[1] == "head" else 0
        self.open_requested.emit(row, head)
