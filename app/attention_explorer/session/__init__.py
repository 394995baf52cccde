"""The document being explored: evented state, file format, undo, size changes. No Qt."""

from attention_explorer.session.document import SessionData
from attention_explorer.session.evented_session import Session
from attention_explorer.session.file_format import (
    SessionFileError,
    load_session,
    loads_session,
    save_session,
)
from attention_explorer.session.history import History
from attention_explorer.session.starter import starter_session

__all__ = [
    "History",
    "Session",
    "SessionData",
    "SessionFileError",
    "load_session",
    "loads_session",
    "save_session",
    "starter_session",
]
