"""Session files: versioned JSON, validated on load with messages that name the JSON path.

Format (version 1)::

    {"format": "attention-explorer-session", "version": 1,
     "name": "...", "description": "...",
     "tokens": ["I", "love", "pizza"], "kv_tokens": [...],          # kv_tokens: cross only
     "config": {"heads": 1, "d_k": 2, "mask": "causal", ...},      # omitted fields: defaults
     "inputs": {"mode": "direct", "Q": [[[...]]], "K": ..., "V": ..., "W_O": ...}
            or {"mode": "projection", "X": ..., "W_Q": ..., "W_K": ..., "W_V": ..., "W_O": ...},
     "notes": [{"title": "...", "text": "..."}],
     "experiment": {"question": "...", "expect": "...", "try": {"heads": 3}}}

Loading never uses pickle or eval. Saving is atomic (temporary file, then rename).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputError, AttentionInputs
from attention_explorer.engine.config import MODES
from attention_explorer.engine.inputs import DIRECT_NAMES, PROJECTION_NAMES, validate_inputs
from attention_explorer.session.document import SessionData

FORMAT_NAME = "attention-explorer-session"
FORMAT_VERSION = 1
MAX_FILE_BYTES = 256 * 1024 * 1024


class SessionFileError(ValueError):
    """A session file that cannot be read; ``path`` is the JSON path of the problem."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


_CONFIG_TYPES: dict[str, tuple[type, ...]] = {
    "mode": (str,), "heads": (int,), "d_model": (int,), "d_k": (int, type(None)),
    "d_v": (int, type(None)), "kv_heads": (int, type(None)), "mask": (str,),
    "padded_keys": (list,), "custom_mask": (list, type(None)), "scale": (str,),
    "scale_factor": (int, float), "temperature": (int, float), "normalizer": (str,),
    "positional": (str,), "positional_seed": (int,), "attention": (str,),
    "use_output_projection": (bool,),
}  # fmt: skip


def _array(path: str, value: Any) -> np.ndarray:
    """A JSON nested list as a float64 array, refusing ragged or non-numeric data."""
    if not isinstance(value, list):
        raise SessionFileError(path, f"expected a list of numbers, got {type(value).__name__}")

    def check(node: Any, where: str, depth_shape: list[int], level: int) -> None:
        if isinstance(node, list):
            if level == len(depth_shape):
                depth_shape.append(len(node))
            elif level > len(depth_shape) or depth_shape[level] != len(node):
                raise SessionFileError(where, "rows have different lengths")
            for k, child in enumerate(node):
                check(child, f"{where}[{k}]", depth_shape, level + 1)
        elif isinstance(node, bool) or not isinstance(node, (int, float)):
            raise SessionFileError(where, f"expected a number, got {json.dumps(node)[:40]}")
        else:
            if level != len(depth_shape):
                raise SessionFileError(where, "rows have different lengths")
            if not math.isfinite(node):
                raise SessionFileError(where, "only finite numbers work")

    shape: list[int] = []
    check(value, path, shape, 0)
    return np.array(value, dtype=np.float64)


def _config(raw: Any, mode: str) -> AttentionConfig:
    if not isinstance(raw, dict):
        raise SessionFileError("config", "expected an object of settings")
    known = AttentionConfig.field_names()
    values: dict[str, Any] = {"mode": mode}
    for key, value in raw.items():
        if key not in known:
            raise SessionFileError(f"config.{key}", f"unknown setting; known: {', '.join(known)}")
        types = _CONFIG_TYPES[key]
        if isinstance(value, bool) and bool not in types:
            raise SessionFileError(f"config.{key}", f"expected {types[0].__name__}, got {value}")
        if not isinstance(value, types):
            raise SessionFileError(
                f"config.{key}", f"expected {types[0].__name__}, got {json.dumps(value)[:40]}"
            )
        if key == "padded_keys":
            value = tuple(value)
        elif key == "custom_mask" and value is not None:
            value = tuple(tuple(bool(x) for x in row) for row in value)
        elif key in ("scale_factor", "temperature"):
            value = float(value)
        values[key] = value
    if "mode" in raw and raw["mode"] != mode:
        raise SessionFileError("config.mode", f"says {raw['mode']!r} but inputs.mode is {mode!r}")
    return AttentionConfig(**values)


def _tokens(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise SessionFileError(where, "expected a non-empty list of token names")
    for k, t in enumerate(raw):
        if not isinstance(t, str):
            raise SessionFileError(f"{where}[{k}]", f"expected a string, got {json.dumps(t)[:40]}")
    return tuple(raw)


def session_from_dict(data: Any) -> SessionData:
    """Validate a parsed JSON document and build a :class:`SessionData` from it."""
    if not isinstance(data, dict):
        raise SessionFileError("", "a session file is a JSON object")
    if data.get("format") != FORMAT_NAME:
        raise SessionFileError("format", f"expected {FORMAT_NAME!r}; is this a session file?")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionFileError("version", "expected a whole number")
    if version > FORMAT_VERSION:
        raise SessionFileError(
            "version", f"{version} is newer than this app reads ({FORMAT_VERSION}); update the app"
        )
    if version < 1:
        raise SessionFileError("version", f"{version} is not a known version")
    raw_inputs = data.get("inputs")
    if not isinstance(raw_inputs, dict):
        raise SessionFileError("inputs", "expected an object with mode and matrices")
    mode = raw_inputs.get("mode", "direct")
    if mode not in MODES:
        raise SessionFileError("inputs.mode", f"{mode!r} is not one of {', '.join(MODES)}")
    config = _config(data.get("config", {}), mode)
    allowed = DIRECT_NAMES if mode == "direct" else PROJECTION_NAMES
    arrays: dict[str, np.ndarray] = {}
    for key, value in raw_inputs.items():
        if key == "mode":
            continue
        if key not in allowed:
            raise SessionFileError(
                f"inputs.{key}", f"not used in {mode} mode; expected {', '.join(allowed)}"
            )
        array = _array(f"inputs.{key}", value)
        if mode == "direct" and key in ("Q", "K", "V") and array.ndim == 2:
            array = array[None]  # a single head may be written as tokens x d
        arrays[key] = array
    inputs = AttentionInputs(**arrays)
    tokens = _tokens(data.get("tokens"), "tokens")
    kv_tokens = _tokens(data["kv_tokens"], "kv_tokens") if "kv_tokens" in data else ()
    try:
        from attention_explorer.engine.inputs import resolve_config

        config = resolve_config(config, inputs)
        n, m = validate_inputs(config, inputs)
    except AttentionInputError as exc:
        raise SessionFileError(exc.field, exc.message) from None
    if len(tokens) != n:
        raise SessionFileError(
            "tokens", f"expected {n} names (one per query row), got {len(tokens)}"
        )
    if config.attention == "cross" and len(kv_tokens) != m:
        raise SessionFileError(
            "kv_tokens", f"expected {m} names (one per key), got {len(kv_tokens)}"
        )
    notes = []
    for k, note in enumerate(data.get("notes", [])):
        if not isinstance(note, dict) or not isinstance(note.get("text"), str):
            raise SessionFileError(f"notes[{k}]", 'expected {"title": ..., "text": ...}')
        notes.append((str(note.get("title", "")), note["text"]))
    experiment = data.get("experiment", {})
    if not isinstance(experiment, dict):
        raise SessionFileError("experiment", "expected an object")
    return SessionData(
        tokens=tokens,
        kv_tokens=kv_tokens,
        config=config,
        inputs=inputs,
        name=str(data.get("name", "Untitled")),
        description=str(data.get("description", "")),
        notes=tuple(notes),
        experiment=experiment,
    )


def session_to_dict(session: SessionData) -> dict:
    """The JSON document for ``session`` (inverse of :func:`session_from_dict`)."""
    config = session.config.to_dict()
    mode = config.pop("mode", "direct")
    inputs: dict[str, Any] = {"mode": mode}
    for name, array in session.inputs.arrays().items():
        inputs[name] = array.tolist()
    doc: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "name": session.name,
        "description": session.description,
        "tokens": list(session.tokens),
        "config": config,
        "inputs": inputs,
    }
    if session.kv_tokens:
        doc["kv_tokens"] = list(session.kv_tokens)
    if session.notes:
        doc["notes"] = [{"title": t, "text": x} for t, x in session.notes]
    if session.experiment:
        doc["experiment"] = session.experiment
    return doc


def load_session(path: str | os.PathLike) -> SessionData:
    """Read and validate a session file; raise :class:`SessionFileError` naming the problem."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SessionFileError("", f"{path.name} is larger than {MAX_FILE_BYTES >> 20} MiB")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SessionFileError("", f"{path} does not exist") from None
    except UnicodeDecodeError:
        raise SessionFileError("", f"{path.name} is not a text (UTF-8 JSON) file") from None
    except OSError as exc:
        raise SessionFileError("", f"cannot read {path}: {exc.strerror or exc}") from None
    return loads_session(text)


def loads_session(text: str) -> SessionData:
    """Parse session JSON text (strict JSON: no NaN or Infinity)."""

    def no_constants(name: str) -> None:
        raise SessionFileError("", f"{name} is not a number a session may hold")

    try:
        data = json.loads(text, parse_constant=no_constants)
    except json.JSONDecodeError as exc:
        raise SessionFileError(
            "", f"not valid JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    return session_from_dict(data)


def dumps_session(session: SessionData) -> str:
    """The session as JSON text, matrices one row per line for readable diffs."""
    return json.dumps(session_to_dict(session), indent=1) + "\n"


def save_session(path: str | os.PathLike, session: SessionData) -> Path:
    """Write ``session`` atomically: a temporary file beside ``path``, then a rename."""
    path = Path(path)
    text = dumps_session(session)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise SessionFileError("", f"folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise SessionFileError("", f"cannot write {path}: {exc.strerror or exc}") from None
    return path
