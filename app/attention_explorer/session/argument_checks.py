"""Argument checks for the Python API: a wrong type is told in the user's words, in one line.

``ae.compute(None)`` raises :class:`ArgumentTypeError` (a TypeError): "ae.compute: session must
be a session (from ae.load, ae.example or ae.resize), got None". A value of the right type that
is out of range (``tokens=0``, ``tokens=100000``) raises a ValueError naming the argument
(AttentionInputError from the size guard). No Qt here.
"""

from __future__ import annotations

import numbers
import os
from typing import Any

from attention_explorer.engine.trace import Trace
from attention_explorer.session.document import SessionData


class ArgumentTypeError(TypeError):
    """An argument of the wrong type given to the Python API: one line naming the function, the
    argument, what it expects and what it got."""

    def __init__(self, function: str, argument: str, expected: str, value: Any, hint: str = ""):
        message = f"{function}: {argument} must be {expected}, got {describe(value)}"
        super().__init__(f"{message}; {hint}" if hint else message)
        self.function = function
        self.argument = argument


def describe(value: Any) -> str:
    """A short description of ``value`` for a message: ``None``, ``'5' (str)``, ``1.5 (float)``."""
    if value is None:
        return "None"
    kind = type(value).__name__
    if isinstance(value, (bool, numbers.Number, str)):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        return f"{shown} ({kind})"
    return f"a {kind}"


def session_data(function: str, session: Any) -> SessionData:
    """The SessionData of ``session`` (a SessionData or the window's evented Session)."""
    if isinstance(session, SessionData):
        return session
    data = getattr(session, "data", None)
    if callable(data) and not isinstance(session, (Trace, type)):
        result = data()
        if isinstance(result, SessionData):
            return result
    hint = "a trace is what ae.compute returns" if isinstance(session, Trace) else ""
    expected = "a session (from ae.load, ae.example or ae.resize)"
    raise ArgumentTypeError(function, "session", expected, session, hint)


def trace(function: str, value: Any) -> Trace:
    """``value`` if it is a Trace, else ArgumentTypeError (a session is told to compute first)."""
    if isinstance(value, Trace):
        return value
    is_session = isinstance(value, SessionData) or callable(getattr(value, "data", None))
    hint = "compute it first: ae.compute(session)" if is_session else ""
    raise ArgumentTypeError(function, "trace", "a trace (from ae.compute)", value, hint)


def path(function: str, value: Any, argument: str = "path") -> str | os.PathLike:
    """``value`` if it is a str or os.PathLike naming something (not empty), else an error."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise ArgumentTypeError(function, argument, "a file path (str or pathlib.Path)", value)
    if not os.fspath(value):
        raise ValueError(f"{function}: {argument} is empty; give a file name")
    if "\x00" in os.fspath(value):
        raise ValueError(f"{function}: {argument} contains a NUL character")
    return value


def text(function: str, value: Any, argument: str = "text") -> str:
    """``value`` if it is a str, else an error."""
    if not isinstance(value, str):
        raise ArgumentTypeError(function, argument, "a str", value)
    return value


def whole(function: str, argument: str, value: Any, optional: bool = True) -> int | None:
    """``value`` as an int if it is a whole number (int or numpy integer, not bool or 1.5)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(function, argument, "a whole number such as 4", value)
    return int(value)
