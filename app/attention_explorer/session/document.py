"""The one declaration of the document's fields, and SessionData, the content of a file.

Every field of the document is declared once, here, with a *role* in its metadata:

- ``compute``: changing it needs a new engine pass (tokens, config, inputs, ...);
- ``text``: words that travel with the file but change no number (name, notes, ...);
- ``setting``: part of the session and of undo, but not of the file (backend, dtype);
- ``view``: only what the learner is looking at (selected head, cell, stage).

:class:`SessionData` is the frozen file content (the ``compute`` and ``text`` fields);
:class:`~attention_explorer.session.evented_session.Session` is built from the same fields plus the
``setting`` and ``view`` ones, and the field lists (:data:`DOCUMENT_FIELDS`,
:data:`COMPUTE_FIELDS`, :data:`VIEW_FIELDS`) are read off these declarations. Qt-free.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields, replace

from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend

ROLE = "role"
COMPUTE, TEXT, SETTING, VIEW = "compute", "text", "setting", "view"


def document_field(role: str, **options: object) -> Field:
    """A dataclass field tagged with its role (one of COMPUTE, TEXT, SETTING, VIEW)."""
    return field(metadata={ROLE: role}, **options)  # type: ignore[call-overload]


class KeyTokens:
    """The one definition of which tokens label the keys (mixed into SessionData and Session)."""

    config: AttentionConfig
    tokens: tuple[str, ...]
    kv_tokens: tuple[str, ...]

    @property
    def key_tokens(self) -> tuple[str, ...]:
        """Labels of the keys: kv_tokens in cross-attention, else the tokens themselves."""
        return self.kv_tokens if self.config.attention == "cross" else self.tokens


@dataclass(frozen=True)
class SessionData(KeyTokens):
    """Everything a session file holds: tokens, settings, matrices, and example text.

    ``kv_tokens`` names the key/value sequence in cross-attention (empty for self-attention).
    ``notes`` are (title, text) pairs shown with an example, e.g. where a tutorial rounds.
    ``experiment`` describes a one-click experiment: a question, what to look for, and
    optional config changes to try (``{"question": ..., "expect": ..., "try": {...}}``).
    """

    tokens: tuple[str, ...] = document_field(COMPUTE, default=("t0",))
    config: AttentionConfig = document_field(COMPUTE, default_factory=AttentionConfig)
    inputs: AttentionInputs = document_field(COMPUTE, default_factory=AttentionInputs)
    kv_tokens: tuple[str, ...] = document_field(COMPUTE, default=())
    name: str = document_field(TEXT, default="Untitled")
    description: str = document_field(TEXT, default="")
    notes: tuple[tuple[str, str], ...] = document_field(TEXT, default=())
    experiment: dict = document_field(TEXT, default_factory=dict, compare=False, hash=False)

    def with_changes(self, **changes: object) -> SessionData:
        """A copy with some fields replaced."""
        return replace(self, **changes)


@dataclass
class SessionSettings:
    """The session's own fields beyond the file: engine settings and what is looked at.

    Only a declaration: :class:`~attention_explorer.session.evented_session.Session` copies these
    fields after the ones of :class:`SessionData`.
    """

    backend: Backend = document_field(SETTING, default_factory=Backend)
    dtype: str = document_field(SETTING, default="float32")
    selected_head: int = document_field(VIEW, default=0)
    selected_cell: tuple[int, int] | None = document_field(VIEW, default=None)
    selected_stage: str = document_field(VIEW, default="weights")


#: Every field of a Session, in declaration order: the file's, then the session's own.
SESSION_FIELDS: tuple[Field, ...] = (*fields(SessionData), *fields(SessionSettings))


def _names(*roles: str) -> tuple[str, ...]:
    return tuple(f.name for f in SESSION_FIELDS if f.metadata[ROLE] in roles)


#: Fields saved in a file (the fields of SessionData).
FILE_FIELDS = tuple(f.name for f in fields(SessionData))
#: Fields that undo and redo record: everything but the view.
DOCUMENT_FIELDS = _names(COMPUTE, TEXT, SETTING)
#: Fields whose change needs a new engine pass.
COMPUTE_FIELDS = _names(COMPUTE, SETTING)
#: Fields that only change what is looked at.
VIEW_FIELDS = _names(VIEW)
