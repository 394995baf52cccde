"""Attention Explorer: edit every number of self-attention and watch every stage change.

The Python API (defined in :mod:`attention_explorer.api`)::

    import attention_explorer as ae
    trace = ae.compute(ae.example("i-love-pizza"))
    trace["weights"]

Names are imported on first use, so ``import attention_explorer`` stays fast and Qt-free.
"""

from __future__ import annotations

import importlib

from attention_explorer._version import __version__

#: The public functions, all defined in attention_explorer.api.
API = (
    "load",
    "save",
    "example",
    "examples",
    "resize",
    "compute",
    "explain",
    "export",
    "show",
    "from_model",
    "model_attention",
    "model_run",
    "models",
    "knockout_sweep",
    "patch",
    "logit_lens",
    "head_attribution",
    "generate",
    "cache_size",
    "latent_view",
)

__all__ = ["__version__", *API]


def __getattr__(name: str):
    """Import an API function on first use (PEP 562)."""
    if name in API:
        value = getattr(importlib.import_module("attention_explorer.api"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'attention_explorer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *API])
