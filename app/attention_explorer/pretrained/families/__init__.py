"""The registry of model families: one :class:`Architecture` per file of this folder.

Adding a family (Llama, Qwen2, Mistral…) is one new file defining ``ARCHITECTURE``: every
module here (and in the subfolders: ``moe/``) is found and read in name order, so no list is
kept by hand.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Mapping

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.model_errors import ModelError


def _family_records() -> tuple[Architecture, ...]:
    """The ``ARCHITECTURE`` of every module in this folder and its subfolders (``moe/``), in
    module-name order."""
    found = pkgutil.walk_packages(__path__, prefix=f"{__name__}.")
    names = sorted((i.name for i in found if not i.ispkg), key=lambda n: n.rsplit(".", 1)[-1])
    return tuple(importlib.import_module(name).ARCHITECTURE for name in names)


#: Every supported family, by its registry key.
FAMILIES: dict[str, Architecture] = {arch.family: arch for arch in _family_records()}

#: What an unsupported-architecture message lists.
SUPPORTED_TEXT = "; ".join(arch.label for arch in FAMILIES.values())


#: The endings of transformers' class names (``LlamaForCausalLM``, ``GPT2LMHeadModel``,
#: ``BertModel``): what is left names the family.
_CLASS_ENDING = re.compile(r"(For[A-Z]\w*|LMHeadModel|Model)$")


def _family_of_class(name: str) -> Architecture | None:
    """The supported family a transformers class name belongs to (``LlamaForCausalLM`` ->
    Llama), else None."""
    stem = _CLASS_ENDING.sub("", name).lower()
    return next((arch for arch in FAMILIES.values() if stem in arch.model_types), None)


def _unsupported(kind: str, names: list[str]) -> str:
    """What is wrong with a config whose ``model_type`` names no supported family."""
    known = [(name, _family_of_class(name)) for name in names]
    known = [(name, arch) for name, arch in known if arch is not None]
    said = (
        f"config.json sets model_type {kind!r}, which is not a supported family"
        if kind
        else ("config.json sets no model_type")
    )
    if known:
        name, arch = known[0]
        fix = arch.model_types[0]
        return (
            f"{said}, while its architectures name {name} (model_type {fix!r}): set model_type "
            f"to {fix!r} if it is one; supported: {SUPPORTED_TEXT}"
        )
    shown = f" (architectures: {', '.join(names)})" if names else ""
    return (
        f"{said}{shown}{'' if kind else ', so its family is unknown'}; supported: {SUPPORTED_TEXT}"
    )


def architecture_for(config: Mapping) -> Architecture:
    """The family of a config.json (by its ``model_type``), or a ModelError saying what is
    wrong: the model_type named, its ``architectures`` only where they are unknown too (a
    supported class under another model_type is said to disagree), and the supported
    families."""
    raw = config.get("model_type")
    kind = "" if raw is None else str(raw)
    for arch in FAMILIES.values():
        if kind.lower() in arch.model_types:
            return arch
    arch_names = config.get("architectures")
    names = [str(a) for a in arch_names] if isinstance(arch_names, list) else []
    raise ModelError("architecture", _unsupported(kind, names))
