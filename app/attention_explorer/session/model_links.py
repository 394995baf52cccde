"""How a session saved by reference finds its model again, without the session importing models.

The session layer sits below the models (``pretrained/``), so it cannot import them. The models'
package installs its lookup here when it is imported (``pretrained/__init__.py``); the public API
and the window import that package before they open or save a file. Without a lookup, a model
session is saved standalone (every number in the file) and a file saved by reference is refused
with a message that says what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attention_explorer.session.document import SessionData


@dataclass(frozen=True)
class ModelLookup:
    """The two questions the file forms ask of the models."""

    #: (id, folder or None, fingerprint, text, layer) -> the layer's session, rebuilt; raises
    #: SessionFileError naming what is missing or changed.
    rebuild: Callable[[str, str | None, str, str, int], SessionData]
    #: a model session's origin -> (the model's own session, its fingerprint), or None when
    #: the model cannot be found or read now.
    base_for_saving: Callable[[dict], tuple[SessionData, str] | None]


_installed: list[ModelLookup] = []


def install_model_lookup(lookup: ModelLookup) -> None:
    """Make ``lookup`` the one the file forms use (the last one installed wins)."""
    _installed[:] = [lookup]


def installed_model_lookup() -> ModelLookup | None:
    """The installed lookup, or None when the model support was never imported."""
    return _installed[0] if _installed else None
