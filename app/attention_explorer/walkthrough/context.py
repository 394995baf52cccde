"""What every narration step needs: the trace, the head, the query row and key column."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_explorer.engine import Trace, explain
from attention_explorer.walkthrough.focus import Focus, why_text
from attention_explorer.walkthrough.markup import tok

#: Products shown when one number is worked out term by term.
TERM_LIMIT = 6


@dataclass
class Context:
    """The followed query ``row`` and key ``col`` of ``head``, and why they were chosen."""

    trace: Trace
    head: int
    row: int
    col: int
    focus: Focus | None = None
    said_why: bool = False

    def why_once(self) -> str:
        """Why this query is followed (HTML), the first time it is asked; then ""."""
        if self.focus is None or self.said_why:
            return ""
        self.said_why = True
        return why_text(self.trace, self.focus)

    @property
    def q_tok(self) -> str:
        """The followed query's token, as the views label it (HTML)."""
        return tok(self.trace.tokens[self.row])

    @property
    def k_tok(self) -> str:
        """The followed key's token, as the views label it (HTML)."""
        return tok(self.trace.kv_tokens[self.col])

    def stage(self, name: str, head: int | None = None) -> np.ndarray:
        """Stage ``name`` of ``head`` (default: the followed head)."""
        return self.trace.stage(name, self.head if head is None else head)

    def explain(self, stage: str, i: int, j: int, head: int | None = None, terms=TERM_LIMIT):
        """The engine's explanation of one cell (the narration's only source of arithmetic)."""
        return explain(self.trace, stage, self.head if head is None else head, i, j, terms)

    @property
    def direct(self) -> bool:
        """True when Q, K and V are typed directly (no projections)."""
        return self.trace.config.mode == "direct"

    @property
    def head_words(self) -> str:
        """`` of head 1`` with several heads, else nothing."""
        return f" of head {self.head}" if self.trace.config.heads > 1 else ""
