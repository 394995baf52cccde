"""PanelContext: what every editing panel works on, built once by the main window.

The matrix panel, its table models and the model panel all edit the one open document
(``session``), record their edits in its undo ``history`` and draw with the user's view
``prefs``. Passing the three as one value keeps their constructors short and the same, and
a panel that needs one more shared thing later gets it without touching every call.

``model`` is model mode's evented state (ui/state/model_state.py): the loaded model, its text,
the open layer's origin, the knockouts and the edits. Every panel of model mode reads it from
here, so a new one (patching, generation) plugs into the same state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attention_explorer.session.evented_session import Session
from attention_explorer.session.history import History
from attention_explorer.ui.state.model_state import ModelState
from attention_explorer.ui.state.preferences import ViewPreferences


@dataclass(frozen=True)
class PanelContext:
    """The open document, its undo history, the view preferences and model mode's state
    (made over the same session and history), shared by the panels."""

    session: Session
    history: History
    prefs: ViewPreferences
    model: ModelState = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", ModelState(self.session, self.history))

    @classmethod
    def for_session(cls, session: Session, prefs: ViewPreferences | None = None) -> PanelContext:
        """A context over ``session`` with a fresh history (and default preferences unless
        ``prefs`` is given): what a panel shown on its own, in a test or a tool, needs."""
        return cls(session, History(session), prefs if prefs is not None else ViewPreferences())
