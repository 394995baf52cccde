"""Attention Explorer: edit every number of self-attention and watch every stage change.

The Python API (defined in :mod:`attention_explorer.api`)::

    import attention_explorer as ae
    trace = ae.compute(ae.example("i-love-pizza"))
    trace["weights"]

Names are imported on first use, so ``import attention_explorer`` stays fast and Qt-free.
"""

from __future__ import annotations

import importlib
import sys
import types

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


class _ExportPackage(types.ModuleType):
    """The ``attention_explorer.export`` package, callable as the API's ``export``."""

    def __call__(self, *args, **kwargs):
        """``ae.export(trace, path, stage=..., head=...)``: see attention_explorer.api.export."""
        return importlib.import_module("attention_explorer.api").export(*args, **kwargs)


class _Package(types.ModuleType):
    """This package. ``ae.export`` is both the export sub-package and the API function.

    Importing a sub-package sets the parent's attribute of the same name, which would replace
    the ``export`` function with the ``attention_explorer.export`` module. So the attribute is
    the module, made callable: ``ae.export(trace, ...)`` and ``import
    attention_explorer.export`` both keep working, in either order.
    """

    @property
    def export(self):
        """The export package, callable as the API's export function."""
        module = importlib.import_module("attention_explorer.export")
        if type(module) is types.ModuleType:
            module.__class__ = _ExportPackage
        return module

    @export.setter
    def export(self, _module) -> None:
        """The import system records the sub-package here; the getter reads sys.modules."""


sys.modules[__name__].__class__ = _Package
