"""SessionLinks: a widget follows session events until it is detached or destroyed."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from psygnal import Signal
from PySide6.QtCore import QObject

from attention_explorer.ui.state.session_links import SessionLinks


class _Source:
    changed = Signal(int)


def test_links_call_their_slots_until_detached(qapp):
    source, seen = _Source(), []
    owner = QObject()
    links = SessionLinks(owner, [(source.changed, seen.append)])
    source.changed.emit(1)
    assert links and seen == [1]
    links.detach()
    source.changed.emit(2)
    assert not links and seen == [1]


def test_links_end_when_their_owner_is_destroyed(qapp):
    source, seen = _Source(), []
    owner = QObject()
    SessionLinks(owner, [(source.changed, seen.append)])
    owner.deleteLater()
    qapp.sendPostedEvents(None, 52)  # QEvent.DeferredDelete
    source.changed.emit(3)
    assert seen == []


def test_a_higher_priority_runs_first(qapp):
    source, order = _Source(), []
    early, late = QObject(), QObject()
    SessionLinks(late, [(source.changed, lambda _v: order.append("late"))])
    SessionLinks(early, [(source.changed, lambda _v: order.append("early"))], priority=1)
    source.changed.emit(0)
    assert order == ["early", "late"]
