"""Small HTML helpers for the narration: they print numbers and names, never compute them.

Every number goes through :func:`attention_explorer.core.numbers.format_number` (the one decimals
policy); every token name is escaped, so a token called ``<img src=x>`` reads literally.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.engine.explain import Step
from attention_explorer.engine.explain_parts import StepLayout
from attention_explorer.walkthrough.step import Cells

#: Rows longer than this are shown with their first values and "… N more".
ROW_LIMIT = 8

_INDENT = "&nbsp;&nbsp;"
#: A step as narration HTML: texts escaped, numbers in typewriter type, the result in bold.
_HTML_LAYOUT = StepLayout(
    "{}",
    _INDENT + "<tt>{}</tt>",
    _INDENT + "<tt>{} = {}</tt>",
    _INDENT + "<tt>… and {} more</tt>",
    _INDENT + "<tt>= <b>{}</b></tt>",
)


def num(x: float) -> str:
    """One number, as every view and export writes it."""
    return format_number(x)


def tok(label: str) -> str:
    """A token name, quoted, bold and escaped."""
    return f"“<b>{html.escape(str(label))}</b>”"


def vec(values: Sequence[float] | np.ndarray, limit: int = ROW_LIMIT) -> str:
    """A row of numbers ``[a, b, … N more]`` in typewriter type."""
    values = list(np.asarray(values).ravel())  # [k]
    shown = ", ".join(num(v) for v in values[:limit])
    more = f", … {len(values) - limit} more" if len(values) > limit else ""
    return f"<tt>[{shown}{more}]</tt>"


def render(step: Step) -> str:
    """One explain() step as HTML: title, formula, the terms, then the result."""
    return "<br>".join(step.lines(_HTML_LAYOUT, escape=html.escape))


def row_cells(row: int, width: int, first: int | None = None) -> Cells:
    """Every cell of one row, the ``first`` column moved to the front."""
    cells = [(row, c) for c in range(width)]
    if first is not None and 0 <= first < width:
        cells.insert(0, cells.pop(first))
    return tuple(cells)


def paragraphs(*parts: str) -> str:
    """Each non-empty part as a paragraph."""
    return "".join(f"<p>{part}</p>" for part in parts if part)
