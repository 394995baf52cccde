"""Find the model a saved model session names, offline, and rebuild the layer it was saved from.

Where it looks, in order: the saved ``folder``; the ``id`` when it is a folder; then the
models available offline (:func:`attention_explorer.pretrained.checkpoint.available.models`:
bundled, installed packages, the Hugging Face cache) whose id is the saved ``id``. Never the
network. The first one whose fingerprint matches is used. Saving computes the model's layer once, to
find what the learner changed.
"""

from __future__ import annotations

from pathlib import Path

from attention_explorer.pretrained.checkpoint.available import models
from attention_explorer.pretrained.checkpoint.fingerprint import fingerprint
from attention_explorer.pretrained.checkpoint.source import hub_cache_root, is_model_folder
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.session.document import SessionData
from attention_explorer.session.session_errors import SessionFileError


def _candidates(model_id: str, folder: str | None) -> list[Path]:
    """Model folders that may hold the model: the saved folder, then offline models by id."""
    found = []
    for given in (folder, model_id):  # an id may itself be a folder (ae.models() lists them so)
        if given and given.strip() and is_model_folder(Path(given).expanduser()):
            found.append(Path(given).expanduser())
    wanted = model_id.strip().lower()
    for entry in models():
        if entry.supported and entry.id.lower() == wanted and entry.path not in found:
            found.append(entry.path)
    return found


def _print_of(folder: Path) -> str | None:
    try:
        return fingerprint(folder)
    except (OSError, ValueError):
        return None


def find_model(model_id: str, folder: str | None, expected: str) -> Path:
    """The folder of the saved model whose fingerprint is ``expected``; else SessionFileError:
    the model is missing (naming where it looked) or its checkpoint changed."""
    candidates = _candidates(model_id, folder)
    for path in candidates:
        if _print_of(path) == expected:
            return path
    if candidates:
        raise SessionFileError(
            "model.fingerprint",
            f"the checkpoint of {model_id!r} at {candidates[0]} changed since this file was "
            "saved (its config, tokenizer or weights differ), so the saved edits would not give "
            "the saved numbers; open it with the original checkpoint",
        )
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
            return from_model(path, origin["text"], int(origin["layer"])), print_
        except (ModelError, ValueError, TypeError):
            return None
    return None
