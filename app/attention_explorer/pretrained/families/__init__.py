"""The registry of model families: one :class:`Architecture` per file, listed here.

Adding a family (Llama, Qwen2, Mistral…) is one new file defining ``ARCHITECTURE`` and one
line in :data:`FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Mapping

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.families import bert, gpt2, llama, mistral, qwen2
from attention_explorer.pretrained.model_errors import ModelError

#: Every supported family, by its registry key.
FAMILIES: dict[str, Architecture] = {
    arch.family: arch
    for arch in (
        bert.ARCHITECTURE,
        gpt2.ARCHITECTURE,
        llama.ARCHITECTURE,
        qwen2.ARCHITECTURE,
        mistral.ARCHITECTURE,
    )
}

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
