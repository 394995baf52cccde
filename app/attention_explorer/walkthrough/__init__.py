"""The step-through walkthrough: one query followed through every stage, narrated. No Qt.

:func:`steps_for` turns a :class:`~attention_explorer.engine.Trace` into a list of
:class:`WalkStep` (which stage view to highlight, which cells, which editor tab, what to say).
:func:`choose_focus` picks the query worth following and says why.
"""

from attention_explorer.walkthrough.focus import Focus, choose_focus
from attention_explorer.walkthrough.narration import steps_for
from attention_explorer.walkthrough.step import WalkStep

__all__ = ["Focus", "WalkStep", "choose_focus", "steps_for"]
