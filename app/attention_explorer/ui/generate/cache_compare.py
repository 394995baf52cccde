"""What a cache policy did to the next tokens: the tokens generated with the full cache and
with the policy, side by side, the first one that differs marked, and a sentence saying where
they part (or that they do not)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from attention_explorer.ui.widgets.layout_parts import plain_label

SHOWN = 16  # generated tokens shown side by side (the sentence names the first difference)


@dataclass(frozen=True)
class Comparison:
    """``full`` and ``policy``: the generated tokens of each; ``first``: the index of the first
    generated token that differs (None: none does), ``position`` its position in the text."""

    full: tuple[str, ...]
    policy: tuple[str, ...]
    first: int | None
    position: int | None


def compare(reference, gen) -> Comparison:
    """The generated tokens of ``reference`` (the full cache) and ``gen`` (with the policy),
    and where they first differ (by id)."""
    n = reference.prompt_length
    full, mine = reference.generated, gen.generated
    first = next((i for i, (a, b) in enumerate(zip(full, mine)) if a != b), None)
    return Comparison(
        tuple(reference.tokens[n:]),
        tuple(gen.tokens[n:]),
        first,
        None if first is None else n + first,
    )


def comparison_text(c: Comparison) -> str:
    """One sentence for ``c``."""
    if c.first is None:
        count = min(len(c.full), len(c.policy))
        return f"The same {count} token{'s' if count != 1 else ''} as with the full cache."
    return (
        f"They part at generated token {c.first} (position {c.position}): "
        f"“{c.policy[c.first]}” with this policy, “{c.full[c.first]}” with the full cache."
    )


class CompareStrip(QWidget):
    """Two rows of tokens (full cache; this policy) and the sentence; :meth:`show_for` fills
    it, :meth:`show_note` shows a sentence alone (no policy to compare). The token cells are
    made once and refilled."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(3)
        grid.setVerticalSpacing(2)
        self.comparison: Comparison | None = None
        self.heads = [self._label("Full cache:"), self._label("This policy:")]
        self.cells = [[self._label("") for _ in range(SHOWN + 1)] for _ in range(2)]
        for r in range(2):
            grid.addWidget(self.heads[r], r, 0)
            for c, cell in enumerate(self.cells[r]):
                grid.addWidget(cell, r, c + 1)
        grid.setColumnStretch(SHOWN + 2, 1)
        self.sentence = plain_label()
        grid.addWidget(self.sentence, 2, 0, 1, SHOWN + 3)
        self._show_rows(False)

    def _label(self, text: str) -> QLabel:
        label = QLabel(text)
        label.setTextFormat(Qt.TextFormat.PlainText)
        return label

    def _show_rows(self, shown: bool) -> None:
        for label in self.heads:
            label.setVisible(shown)
        for line in self.cells:
            for cell in line:
                cell.setVisible(False)

    def show_note(self, text: str) -> None:
        """No comparison: only ``text``."""
        self.comparison = None
        self._show_rows(False)
        self.sentence.setText(text)

    def show_for(self, reference, gen) -> Comparison:
        """The tokens of ``reference`` (full cache) above those of ``gen`` (the policy)."""
        c = self.comparison = compare(reference, gen)
        self._show_rows(True)
        for line, tokens in zip(self.cells, (c.full, c.policy)):
            shown = list(tokens[:SHOWN]) + (["…"] if len(tokens) > SHOWN else [])
            for i, token in enumerate(shown):
                cell = line[i]
                style = "padding: 1px 3px; border: 1px solid #bbb;" if token != "…" else ""
                if c.first is not None and i == c.first:
                    style += " background: #f4c430; color: black; font-weight: bold;"
                elif c.first is not None and i > c.first and token != "…":
                    style += " color: #a04000;"
                cell.setStyleSheet(style)
                cell.setText(token)
                cell.setToolTip(
                    "The first token that differs" if c.first is not None and i == c.first else ""
                )
                cell.setVisible(True)
        self.sentence.setText(comparison_text(c))
        return c
