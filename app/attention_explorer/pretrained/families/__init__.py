"""The registry of model families: one :class:`Architecture` per file of this folder.

Adding a family (Llama, Qwen2, Mistral…) is one new file defining ``ARCHITECTURE``: every
module here is found and read in name order, so no list is kept by hand.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.model_errors import ModelError


def _family_records() -> tuple[Architecture, ...]:
    """The ``ARCHITECTURE`` of every module in this folder, in module-name order."""
    names = sorted(info.name for info in pkgutil.iter_modules(__path__))
    return tuple(importlib.import_module(f"{__name__}.{name}").ARCHITECTURE for name in names)


#: Every supported family, by its registry key.
FAMILIES: dict[str, Architecture] = {arch.family: arch for arch in _family_records()}

#: What an unsupported-architecture message lists.
SUPPORTED_TEXT = "; ".join(arch.label for arch in FAMILIES.values())


def architecture_for(config: Mapping) -> Architecture:
    """The family of a config.json (by its ``model_type``), or a ModelError naming the
    supported ones."""
    kind = str(config.get("model_type", "")).lower()
    for arch in FAMILIES.values():
        if kind in arch.model_types:
            return arch
    arch_names = config.get("architectures")
    names = ", ".join(str(a) for a in arch_names) if isinstance(arch_names, list) else ""
    raise ModelError(
        "architecture",
        f"the architecture {names or kind or 'unknown'} is not supported; "
        f"supported: {SUPPORTED_TEXT}",
    )
