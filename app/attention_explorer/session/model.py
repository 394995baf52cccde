"""Session: the evented document being explored (psygnal, no Qt).

Assigning a field emits ``session.events.<field>(new, old)``; nothing else changes state.
Views subscribe to the fields they show and write only by assigning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from psygnal import evented

from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend
from attention_explorer.session.document import SessionData

#: Fields that change what the engine computes (and that undo/redo records).
DOCUMENT_FIELDS = (
    "tokens", "kv_tokens", "config", "inputs", "name", "description", "notes", "experiment",
    "backend", "dtype",
)  # fmt: skip
#: Fields that only change what is looked at.
VIEW_FIELDS = ("selected_head", "selected_cell", "selected_stage")
#: Fields whose change needs a new engine pass.
COMPUTE_FIELDS = ("tokens", "kv_tokens", "config", "inputs", "backend", "dtype")


@evented
@dataclass
class Session:
    """The document: tokens, settings and matrices, plus what the user is looking at.

    ``selected_cell`` is (query row, key column) or None. ``selected_head`` always names one
    of ``config.heads`` heads: a config with fewer heads moves it to the last one.
    """

    tokens: tuple[str, ...] = ("t0",)
    config: AttentionConfig = field(default_factory=AttentionConfig)
    inputs: AttentionInputs = field(default_factory=AttentionInputs)
    kv_tokens: tuple[str, ...] = ()
    name: str = "Untitled"
    description: str = ""
    notes: tuple[tuple[str, str], ...] = ()
    experiment: dict = field(default_factory=dict)
    backend: Backend = field(default_factory=Backend)
    dtype: str = "float32"
    selected_head: int = 0
    selected_cell: tuple[int, int] | None = None
    selected_stage: str = "weights"

    def __post_init__(self) -> None:
        self.events.config.connect(self._on_config_changed)

    def _on_config_changed(self, config: AttentionConfig, *_old: object) -> None:
        """Keep ``selected_head`` one of the heads when a change (or undo) leaves fewer."""
        if self.selected_head >= config.heads:
            self.selected_head = config.heads - 1

    @classmethod
    def from_data(cls, data: SessionData) -> Session:
        """A new session holding ``data``."""
        session = cls()
        session.load(data)
        return session

    def data(self) -> SessionData:
        """The file content of this session, as an immutable snapshot."""
        return SessionData(
            tokens=self.tokens,
            kv_tokens=self.kv_tokens,
            config=self.config,
            inputs=self.inputs,
            name=self.name,
            description=self.description,
            notes=self.notes,
            experiment=self.experiment,
        )

    def load(self, data: SessionData) -> None:
        """Replace the document with ``data`` (one event per field that changes)."""
        self.update(
            tokens=data.tokens,
            kv_tokens=data.kv_tokens,
            config=data.config,
            inputs=data.inputs,
            name=data.name,
            description=data.description,
            notes=data.notes,
            experiment=data.experiment,
        )
        if self.selected_head >= data.config.heads:
            self.selected_head = 0
        self.selected_cell = None

    def update(self, **fields: object) -> None:
        """Assign several fields; inputs and config go in first-consistent order."""
        for name in ("inputs", "config", "tokens", "kv_tokens"):
            if name in fields:
                setattr(self, name, fields.pop(name))
        for name, value in fields.items():
            setattr(self, name, value)

    @property
    def key_tokens(self) -> tuple[str, ...]:
        """Labels of the keys: kv_tokens in cross-attention, else the tokens."""
        return self.kv_tokens if self.config.attention == "cross" else self.tokens
