"""How a widget follows the session: (psygnal signal, slot) links that end with the widget."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from PySide6.QtCore import QObject

#: One link: a psygnal signal instance and the slot it calls.
Link = tuple[object, object]


def connect_until_destroyed(owner: QObject, connections: list[Link], priority: int = 0) -> None:
    """Connect each (psygnal signal, slot) pair, and disconnect them all when ``owner`` dies.

    A Qt object deleted by its parent must not be called by a later session event. Slots of
    a higher ``priority`` run before the others of the same signal.
    """
    for signal, slot in connections:
        signal.connect(slot, priority=priority)
    owner.destroyed.connect(partial(disconnect_all, connections))


def disconnect_all(connections: list[Link], *_args: object) -> None:
    """Disconnect every (signal, slot) pair still in ``connections`` and empty the list."""
    while connections:
        signal, slot = connections.pop()
        signal.disconnect(slot)


class SessionLinks:
    """The links one Qt object follows, connected now and cut by :meth:`detach` or its death."""

    def __init__(self, owner: QObject, links: Iterable[Link], priority: int = 0):
        self._links = list(links)
        connect_until_destroyed(owner, self._links, priority)

    def __bool__(self) -> bool:
        """False once detached (psygnal may still call a slot it had in hand)."""
        return bool(self._links)

    def detach(self) -> None:
        """Disconnect every link now."""
        disconnect_all(self._links)
