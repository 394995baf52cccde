"""Find the model a saved model session names, offline, and rebuild the layer it was saved from.

Where it looks, in order: the saved ``folder``; the ``id`` when it is a folder; then the model
of that very id among those available offline: bundled with the app, shipped by an installed
package, or the id's own repo in the Hugging Face cache (never the rest of the cache, so a
folder there that cannot be read does not matter). Never the network. The first one whose
fingerprint matches is used. A folder that cannot be read (a missing shard, an index naming a
file outside the folder, a malformed header) is reported as such, never as a changed
checkpoint. Saving computes the model's layer once, to find what the learner changed.
"""

from __future__ import annotations

from pathlib import Path

from attention_explorer.pretrained.checkpoint.fingerprint import fingerprint, matches
from attention_explorer.pretrained.checkpoint.source import (
    _hub_cache_folder,
    bundled_root,
    hub_cache_root,
    is_hub_id,
    is_model_folder,
    packaged_folder,
)
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.session.document import SessionData
from attention_explorer.session.session_errors import SessionFileError


def _by_id(model_id: str) -> list[Path]:
    """The offline folders of ``model_id`` itself: bundled, packaged, its cache repo."""
    text = model_id.strip()
    if not is_hub_id(text):
        return []
    found = []
    bundled = bundled_root()
    if bundled is not None and "/" not in text:
        found.append(bundled / text)
    found.append(packaged_folder(text))
    try:
        found.append(_hub_cache_folder(text))
    except ModelError:
        pass  # a refs/main that is too large or names no snapshot: not this model
    return [f for f in found if f is not None and is_model_folder(f)]


def _folder_problem(path: Path) -> str | None:
    """Why the folder ``path``, which exists, cannot be read (None: it can, or is absent)."""
    try:
        path.stat()
        next(iter(path.iterdir()), None)
    except (FileNotFoundError, NotADirectoryError):
        return None  # not there, or not a folder: simply not found
    except OSError as exc:
        return f"the folder {path} cannot be read: {(exc.strerror or type(exc).__name__).lower()}"
    return None


def _candidates(model_id: str, folder: str | None, problems: list[str] | None = None) -> list[Path]:
    """Model folders that may hold the model: the saved folder, the id as a folder, then the
    id's own offline copies (:func:`_by_id`). Nothing else is looked at. Why a named folder
    cannot be read is added to ``problems``."""
    found: list[Path] = []
    for given in (folder, model_id):  # an id may itself be a folder (ae.models() lists them so)
        if not (given and given.strip()):
            continue
        path = Path(given).expanduser()
        if is_model_folder(path):
            found.append(path)
        elif problems is not None and (problem := _folder_problem(path)):
            problems.append(problem)
    for path in _by_id(model_id):
        if path not in found:
            found.append(path)
    return found


def _print_of(folder: Path) -> str | None:
    try:
        return fingerprint(folder)
    except ModelError:
        return None


def find_model(model_id: str, folder: str | None, expected: str) -> Path:
    """The folder of the saved model whose fingerprint is ``expected``; else SessionFileError:
    the model is missing (naming where it looked), cannot be read (naming the file and why),
    or its checkpoint changed."""
    unreadable: list[str] = []
    candidates = _candidates(model_id, folder, unreadable)
    changed: list[Path] = []
    for path in candidates:
        try:
            if matches(path, expected):
                return path
            changed.append(path)
        except ModelError as exc:
            unreadable.append(str(exc))
    if changed:
        raise SessionFileError(
            "model.fingerprint",
            f"the checkpoint of {model_id!r} at {changed[0]} changed since this file was "
            "saved (its config, tokenizer or weights differ), so the saved edits would not give "
            "the saved numbers; open it with the original checkpoint",
        )
    if unreadable:
        raise SessionFileError("model", f"the model {model_id!r} cannot be read: {unreadable[0]}")
    where = f"the folder {folder}, " if folder else ""
    raise SessionFileError(
        "model.id",
        f"the model {model_id!r} is not on this computer: looked in {where}the bundled models, "
        f"installed model packages and the Hugging Face cache ({hub_cache_root()}); "
        "install it or put its folder back",
    )


def rebuild(model_id: str, folder: str | None, expected: str, text: str, layer: int):
    """The session ``from_model`` gives for the saved model, text and layer (SessionData)."""
    from attention_explorer.pretrained.open_model import from_model

    path = find_model(model_id, folder, expected)
    try:
        return from_model(path, text, layer)
    except ModelError as exc:
        raise SessionFileError("model", f"could not rebuild it from {path}: {exc}") from None


def base_for_saving(origin: dict) -> tuple[SessionData, str] | None:
    """(the model's own session, its fingerprint) for a model session's origin, or None when
    the model cannot be found or read now (the caller then saves standalone)."""
    from attention_explorer.pretrained.open_model import from_model

    folder = origin.get("folder")
    candidates = _candidates(str(origin.get("name", "")), folder)
    for path in candidates:
        print_ = _print_of(path)
        if print_ is None:
            continue
        try:
            base = from_model(path, origin["text"], int(origin["layer"]))
        except (ModelError, ValueError, TypeError):
            return None
        if _print_of(path) != print_:  # changed while it was read: no reference to trust
            return None
        return base, print_
    return None
