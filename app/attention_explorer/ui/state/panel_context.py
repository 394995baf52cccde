"""PanelContext: what every editing panel works on, built once by the main window.

The matrix panel, its table models and the model panel all edit the one open document
(``session``), record their edits in its undo ``history`` and draw with the user's view
``prefs``. Passing the three as one value keeps their constructors short and the same, and
a panel that needs one more shared thing later gets it without touching every call.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_explorer.session.evented_session import Session
from attention_explorer.session.history import History
from attention_explorer.ui.state.preferences import ViewPreferences


@dataclass(frozen=True)
class PanelContext:
    """The open document, its undo history and the view preferences, shared by the panels."""

    session: Session
    history: History
    prefs: ViewPreferences

    @classmethod
    def for_session(cls, session: Session, prefs: ViewPreferences | None = None) -> PanelContext:
        """A context over ``session`` with a fresh history (and default preferences unless
        ``prefs`` is given): what a panel shown on its own, in a test or a tool, needs."""
        return cls(session, History(session), prefs if prefs is not None else ViewPreferences())
