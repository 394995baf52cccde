"""WalkStep: one stop of the walkthrough (which view, which cells, which editor, what to say)."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

Cells = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class WalkStep:
    """One stop of the walkthrough.

    ``stage`` is the stage view to highlight (None for a text-only step), ``head`` the head
    to show, ``cells`` the ``(row, col)`` cells of that stage the step uses (the focus cell
    first), ``text`` the narration as simple HTML. ``related`` names other stage views and
    their cells that take part (e.g. the query row of Q and the key row of K for one score).
    ``editor`` names the input matrix tab that holds the numbers the step starts from
    ("X", "W_Q", "K", ...), or "" when no editor tab belongs to it. ``selection`` is the
    (query row, key column) the views select for this step: the followed query and key,
    except where a step looks at another key (another head's favourite).
    """

    key: str
    title: str
    stage: str | None
    head: int
    cells: Cells
    text: str
    related: tuple[tuple[str, Cells], ...] = ()
    editor: str = ""
    selection: tuple[int, int] | None = None

    def plain(self) -> str:
        """The narration without markup, for tests, the command line and screen readers."""
        text = re.sub(r"<br\s*/?>|</p>|</tr>|</li>", "\n", self.text)
        text = re.sub(r"</t[dh]>", " ", text)
        return html.unescape(re.sub(r"<[^>]+>", "", text))
