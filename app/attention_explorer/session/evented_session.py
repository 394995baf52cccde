"""Session: the evented document being explored (psygnal, no Qt).

Assigning a field emits ``session.events.<field>(new, old)``; nothing else changes state.
Views subscribe to the fields they show and write only by assigning. The fields are not
typed here: they are those declared once in :mod:`attention_explorer.session.document`.

A change of several fields (:meth:`Session.update`, :meth:`Session.load`, undo of a resize)
is applied with the events paused, so every listener runs after *all* fields hold their new
values and never sees new inputs beside an old config.
"""

from __future__ import annotations

import copy
from contextlib import ExitStack, contextmanager
from dataclasses import Field, make_dataclass

from psygnal import evented

from attention_explorer.session.document import (
    COMPUTE_FIELDS,
    DOCUMENT_FIELDS,
    FILE_FIELDS,
    SESSION_FIELDS,
    VIEW_FIELDS,
    KeyTokens,
    SessionData,
)

__all__ = ["COMPUTE_FIELDS", "DOCUMENT_FIELDS", "VIEW_FIELDS", "Session"]


def _latest_of(first: tuple, later: tuple) -> tuple:
    """Fold two queued ``(new, old)`` emissions into one: the latest new, the first old."""
    return (later[0], *first[1:])


class _SessionBehaviour(KeyTokens):
    """The methods of :class:`Session` (its fields come from the document declaration)."""

    def __post_init__(self) -> None:
        self.events.config.connect(self._on_config_changed)

    def _on_config_changed(self, config, *_old: object) -> None:
        """Keep ``selected_head`` one of the heads when a change (or undo) leaves fewer."""
        if self.selected_head >= config.heads:
            self.selected_head = config.heads - 1

    @classmethod
    def from_data(cls, data: SessionData):
        """A new session holding ``data``."""
        session = cls()
        session.load(data)
        return session

    def data(self) -> SessionData:
        """The file content of this session, as an immutable snapshot."""
        return SessionData(**{name: getattr(self, name) for name in FILE_FIELDS})

    def load(self, data: SessionData) -> None:
        """Replace the document with ``data``; listeners hear of it once it is all in."""
        changes: dict[str, object] = {name: getattr(data, name) for name in FILE_FIELDS}
        if self.selected_head >= data.config.heads:
            changes["selected_head"] = 0
        changes["selected_cell"] = None
        self.update(**changes)

    def update(self, **changes: object) -> None:
        """Assign several fields as one consistent change (one event per changed field)."""
        with self.consistent_change():
            for name, value in changes.items():
                setattr(self, name, value)

    @contextmanager
    def consistent_change(self):
        """Hold every event back until the block ends, then emit each changed field once.

        Each field's own signal is paused (``events.paused()`` would hold back only
        ``events.all``), so a listener of ``config`` runs after ``inputs`` is in too.
        """
        with ExitStack() as stack:
            for name in SESSION_FIELD_NAMES:
                stack.enter_context(getattr(self.events, name).paused(_latest_of))
            yield


SESSION_FIELD_NAMES = tuple(f.name for f in SESSION_FIELDS)


def _session_field(declared: Field) -> tuple[str, object, Field]:
    return declared.name, declared.type, copy.copy(declared)


Session = evented(
    make_dataclass(
        "Session",
        [_session_field(f) for f in SESSION_FIELDS],
        bases=(_SessionBehaviour,),
        namespace={"__module__": __name__},
    )
)
Session.__doc__ = """The document: tokens, settings and matrices, plus what the user is looking at.

Its fields are those of SessionData, then backend, dtype and the view fields. ``selected_cell``
is (query row, key column) or None. ``selected_head`` always names one of ``config.heads``
heads: a config with fewer heads moves it to the last one.
"""
