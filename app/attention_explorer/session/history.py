"""Undo and redo for a Session: records every assignment to a document field.

Edits made inside ``with history.transaction("label"):`` undo as one step. Consecutive
transactions with the same ``merge`` key (a slider being dragged) fold into one step.
A step marked ``explore`` (an example's "Try it") can be undone like any other but never
makes the document unsaved: an example the learner only explored never asks to be saved.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from psygnal import EmissionInfo, Signal

from attention_explorer.session.evented_session import DOCUMENT_FIELDS, Session


@dataclass
class _Step:
    label: str
    changes: list[tuple[str, object, object]] = field(default_factory=list)  # (field, old, new)
    merge: str | None = None
    explore: bool = False


class History:
    """The undo stack of one session; ``changed`` fires whenever undo/redo state changes."""

    changed = Signal()

    def __init__(self, session: Session, limit: int = 500):
        self.session = session
        self.limit = limit
        self._done: list[_Step] = []
        self._undone: list[_Step] = []
        self._open: _Step | None = None
        self._depth = 0
        self._replaying = False
        self._clean_steps: list[_Step] = []  # the edits (not explorations) at the last save
        #: True only while the last thing that happened was a push of a mergeable step: an
        #: undo, redo or save ends the gesture, so the next drag starts a step of its own.
        self._merge_open = False
        session.events.all.connect(self._on_event)

    # -- recording -----------------------------------------------------------------------
    def _on_event(self, info: EmissionInfo) -> None:
        name = info.signal.name
        if self._replaying or name not in DOCUMENT_FIELDS:
            return
        new, old = info.args[0], info.args[1]
        if self._open is not None:
            self._open.changes.append((name, old, new))
            return
        self._push(_Step(label=f"change {name}", changes=[(name, old, new)]))

    def _push(self, step: _Step) -> None:
        if not step.changes:
            return
        last = self._done[-1] if self._done else None
        if (
            step.merge is not None
            and self._merge_open
            and last is not None
            and last.merge == step.merge
            and not self._is_clean_step(last)
        ):
            last.changes.extend(step.changes)
            self.changed.emit()
            return
        self._merge_open = step.merge is not None
        self._done.append(step)
        if len(self._done) > self.limit:
            self._done.pop(0)
        self._undone.clear()
        self.changed.emit()

    @contextmanager
    def transaction(self, label: str, merge: str | None = None, explore: bool = False):
        """Group every assignment inside the block into one undo step.

        ``explore=True``: the step tries something out and does not make the document dirty.
        """
        if self._depth == 0:
            self._open = _Step(label=label, merge=merge, explore=explore)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                step, self._open = self._open, None
                self._push(step)

    # -- replay --------------------------------------------------------------------------
    @property
    def can_undo(self) -> bool:
        """True when there is a step to undo."""
        return bool(self._done)

    @property
    def can_redo(self) -> bool:
        """True when there is an undone step to redo."""
        return bool(self._undone)

    @property
    def undo_label(self) -> str:
        """Label of the step Undo would revert ('' when none)."""
        return self._done[-1].label if self._done else ""

    @property
    def redo_label(self) -> str:
        """Label of the step Redo would re-apply ('' when none)."""
        return self._undone[-1].label if self._undone else ""

    def undo(self) -> bool:
        """Revert the last step; False when there was none."""
        if not self._done:
            return False
        step = self._done.pop()
        self._merge_open = False
        self._apply([(name, old) for name, old, _new in reversed(step.changes)])
        self._undone.append(step)
        self.changed.emit()
        return True

    def redo(self) -> bool:
        """Re-apply the last undone step; False when there was none."""
        if not self._undone:
            return False
        step = self._undone.pop()
        self._merge_open = False
        self._apply([(name, new) for name, _old, new in step.changes])
        self._done.append(step)
        self.changed.emit()
        return True

    def _apply(self, assignments: list[tuple[str, object]]) -> None:
        self._replaying = True
        try:
            with self.session.consistent_change():
                for name, value in assignments:
                    setattr(self.session, name, value)
        finally:
            self._replaying = False

    def clear(self) -> None:
        """Forget every step (after New or Open) and mark the document clean."""
        self._done.clear()
        self._undone.clear()
        self.mark_clean()

    # -- saved state ---------------------------------------------------------------------
    def mark_clean(self) -> None:
        """Remember the current state as the saved one."""
        self._clean_steps = self._edits()
        self._merge_open = False
        self.changed.emit()

    def _edits(self) -> list[_Step]:
        return [step for step in self._done if not step.explore]

    def _is_clean_step(self, step: _Step) -> bool:
        return any(step is clean for clean in self._clean_steps)

    @property
    def is_dirty(self) -> bool:
        """True when the learner's own edits differ from the last saved (or opened) state.

        Explorations (``explore`` steps) do not count.
        """
        edits = self._edits()
        return len(edits) != len(self._clean_steps) or any(
            a is not b for a, b in zip(edits, self._clean_steps)
        )
