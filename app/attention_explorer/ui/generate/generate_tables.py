"""The Generate window's two tables: every generated token (the chosen token, its probability
and the model's rank of it, one row a step) and the selected step's ten most probable next
tokens. Item views show text literally (a token named ``<b>`` is those three characters)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from attention_explorer.generation.sampling import softmax

TOP = 10


def percent(p: float) -> str:
    """A probability as a percentage with one decimal ("12.3%"; "<0.1%" for a small one that is
    not 0, so a token that could be drawn never reads as 0.0%)."""
    if 0 < p < 0.0005:
        return "<0.1%"
    return f"{100.0 * p:.1f}%"


def shown(text: str) -> str:
    """A token's text as a cell shows it: a space, a tab or a line break made visible (an empty
    cell would read as nothing generated)."""
    if not text.strip():
        return text.replace(" ", "␣").replace("\t", "⇥").replace("\n", "↵") or "(empty)"
    return text.replace("\n", "↵").replace("\t", "⇥")


def _item(text: str, tip: str = "", align_right: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    if tip:
        item.setToolTip(tip)
    if align_right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _set_up(table: QTableWidget, rows_selectable: bool) -> None:
    """A read-only table without row numbers, its columns as wide as their contents."""
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    if rows_selectable:
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    else:
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)


def _headers(table: QTableWidget, headers: list[str], tips: list[str]) -> None:
    table.setColumnCount(len(headers))
    table.setHorizontalHeaderLabels(headers)
    for column, tip in enumerate(tips):
        table.horizontalHeaderItem(column).setToolTip(tip)


class StepsTable(QTableWidget):
    """One row per generated token: step, the query's position and token (what it read from),
    the chosen token, its probability, the model's rank of it."""

    HEADERS = ["Step", "Query (position)", "Chosen token", "Probability", "Model's rank"]
    TIPS = [
        "Step i chose generated token i, counted from 0 as layers, heads and positions are",
        "The token whose query predicted this step (at step 1 the prompt's last token), "
        "with its position",
        "The token this step chose",
        "Its probability in the distribution it was drawn from (the model's own when greedy)",
        "1: the model's most probable token; more when sampling picked a less probable one",
    ]

    def __init__(self):
        super().__init__()
        _set_up(self, rows_selectable=True)
        _headers(self, self.HEADERS, self.TIPS)
        header = self.horizontalHeader()
        header.setStretchLastSection(False)  # the token takes the room, not the rank
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)

    def show_generation(self, generation, selected: int) -> None:
        """Fill the rows from ``generation`` (None: empty) and select row ``selected``."""
        self.blockSignals(True)
        steps = () if generation is None else generation.steps
        self.setRowCount(len(steps))
        for i, step in enumerate(steps):
            query = shown(generation.tokens[step.position])
            cells = (
                _item(str(i), align_right=True),
                _item(f"{query} ({step.position})"),
                _item(shown(step.text), tip=f"token id {step.token}"),
                _item(percent(step.probability), align_right=True),
                _item(str(step.rank + 1), align_right=True),
            )
            for column, item in enumerate(cells):
                self.setItem(i, column, item)
        if 0 <= selected < len(steps):
            self.selectRow(selected)
            self.scrollToItem(self.item(selected, 0))
        self.blockSignals(False)


class TopTable(QTableWidget):
    """The selected step's ten most probable next tokens by the model's own probabilities,
    with the probabilities the token was drawn from beside them when sampling (0% where
    top-k or top-p cut a token off); the chosen token's row is bold."""

    def __init__(self):
        super().__init__()
        _set_up(self, rows_selectable=False)
        self._columns(sampled=False)
        self.horizontalHeader().setStretchLastSection(False)
        self.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)

    def _columns(self, sampled: bool) -> None:
        headers = ["Rank", "Token", "Model's probability"]
        tips = [
            "1: the model's most probable next token",
            "The candidate next token",
            "softmax of the model's logits",
        ]
        if sampled:
            headers.append("Drawn with")
            tips.append(
                "The probability after temperature, top-k and top-p: what the token was "
                "drawn from (0% where top-k or top-p cut it off)"
            )
        _headers(self, headers, tips)

    def show_step(self, step, text_of, sampled: bool) -> None:
        """The top 10 of ``step`` (None: empty); ``text_of(id)`` names a token."""
        self._columns(sampled)
        if step is None:
            self.setRowCount(0)
            return
        model = softmax(step.logits)  # [vocab]
        order = np.argsort(-step.logits, kind="stable")[:TOP]  # [10] the model's best first
        if step.token not in order:  # a sampled token outside the ten: its row last
            order = np.append(order[: TOP - 1], step.token)
        self.setRowCount(len(order))
        bold = QFont(self.font())
        bold.setBold(True)
        for row, token in enumerate(order):
            rank = int(np.count_nonzero(step.logits > step.logits[token])) + 1
            cells = [
                _item(str(rank), align_right=True),
                _item(shown(text_of(int(token))), tip=f"token id {int(token)}"),
                _item(percent(float(model[token])), align_right=True),
            ]
            if sampled:
                cells.append(_item(percent(float(step.probs[token])), align_right=True))
            if int(token) == step.token:
                cells[1].setText(f"{cells[1].text()}  ◀ chosen")
            for column, item in enumerate(cells):
                if int(token) == step.token:
                    item.setFont(bold)
                self.setItem(row, column, item)
