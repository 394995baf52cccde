"""SessionData: the content of one session file, immutable and Qt-free."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from attention_explorer.engine import AttentionConfig, AttentionInputs


@dataclass(frozen=True)
class SessionData:
    """Everything a session file holds: tokens, settings, matrices, and example text.

    ``kv_tokens`` names the key/value sequence in cross-attention (empty for self-attention).
    ``notes`` are (title, text) pairs shown with an example, e.g. where a tutorial rounds.
    ``experiment`` describes a one-click experiment: a question, what to look for, and
    optional config changes to try (``{"question": ..., "expect": ..., "try": {...}}``).
    """

    tokens: tuple[str, ...]
    config: AttentionConfig
    inputs: AttentionInputs
    kv_tokens: tuple[str, ...] = ()
    name: str = "Untitled"
    description: str = ""
    notes: tuple[tuple[str, str], ...] = ()
    experiment: dict = field(default_factory=dict, compare=False, hash=False)

    def with_changes(self, **changes: object) -> SessionData:
        """A copy with some fields replaced."""
        return replace(self, **changes)

    @property
    def key_tokens(self) -> tuple[str, ...]:
        """Labels of the keys: kv_tokens in cross-attention, else the tokens themselves."""
        return self.kv_tokens if self.config.attention == "cross" else self.tokens
