"""Session files: the one loader every way in uses (window, CLI, API, examples), and saving.

Format (version 1; declared once in :mod:`session.schema`, published as a JSON Schema)::

    {"format": "attention-explorer-session", "version": 1,
     "name": "...", "description": "...",
     "tokens": ["I", "love", "pizza"], "kv_tokens": [...],          # kv_tokens: cross only
     "config": {"heads": 1, "d_k": 2, "mask": "causal", ...},      # omitted fields: defaults
     "inputs": {"mode": "direct", "Q": [[[...]]], "K": ..., "V": ..., "W_O": ...}
            or {"mode": "projection", "X": ..., "W_Q": ..., "W_K": ..., "W_V": ..., "W_O": ...},
     "notes": [{"title": "...", "text": "..."}],
     "experiment": {"question": "...", "expect": "...", "try": {"heads": 3}}}

Two more forms (:mod:`session.file_forms`): a model session is saved as ``"model": {...}``
(the model, text, layer, fingerprint and changed cells; ``inputs`` holds only the mode), and
a standalone file as ``"arrays": {"X": {"dtype": "<f8", "shape": [n, d], "data": base64}}``.

d_model, d_k and d_v may be left out: they are read from the matrices' shapes (and checked
against them when given). Every failure raises :class:`SessionFileError`, one line naming the
JSON path. Loading never uses pickle or eval, costs O(size of the file) and checks the size
budget (:mod:`engine.budget`) before the engine allocates anything. Saving is atomic.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputError, AttentionInputs
from attention_explorer.engine.budget import check_budget
from attention_explorer.engine.inputs import (
    DIRECT_NAMES,
    PROJECTION_NAMES,
    resolve_config,
    validate_inputs,
)
from attention_explorer.session.document import SessionData
from attention_explorer.session.file_forms import extra_arrays, file_dict
from attention_explorer.session.matrices import decode_matrix
from attention_explorer.session.reading import MAX_FILE_BYTES, json_bytes, read_file_bytes
from attention_explorer.session.schema import (
    FORMAT_NAME,
    FORMAT_VERSION,
    HEADER_DECODER,
    OBJECT_AT,
    SESSION_DECODER,
    ConfigFields,
    SessionFile,
    field_names,
    given,
    session_json_schema,
)
from attention_explorer.session.session_errors import SessionFileError, path_of

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAX_FILE_BYTES",
    "SessionFileError",
    "dumps_session",
    "load_session",
    "loads_session",
    "save_session",
    "session_from_dict",
    "session_json_schema",
    "session_to_dict",
]

_KNOWN_KEYS = {where: field_names(struct) for where, struct in OBJECT_AT.items()}


#: A high-surrogate escape not followed by a low one, or a low one on its own.
_LONE_SURROGATE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _position(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def _decode(decoder: msgspec.json.Decoder, data: bytes):
    """Run a msgspec decoder, turning every way it can fail into SessionFileError."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise SessionFileError(*path_of(str(exc), known=_KNOWN_KEYS)) from None
    except msgspec.DecodeError as exc:
        text = str(exc)
        offset = int(text.rsplit("byte ", 1)[1].rstrip(")")) if "(byte " in text else len(data)
        where = _position(data, min(offset, len(data)))
        lone = _LONE_SURROGATE.search(data)
        if lone or "surrogate" in text:
            where = _position(data, lone.start()) if lone else where
            raise SessionFileError(
                "", f"invalid Unicode: a lone surrogate escape ({where})"
            ) from None
        for word in ("NaN", "Infinity", "-Infinity"):
            if data.startswith(word.encode(), offset):
                raise SessionFileError(
                    "", f"{word} is not a number a session may hold ({where})"
                ) from None
        raise SessionFileError("", f"not valid JSON ({where})") from None
    except RecursionError:
        raise SessionFileError("", "lists or objects are nested too deeply") from None


def _check_header(data: bytes) -> None:
    """Say "not a session file" or "newer version" before any other complaint."""
    header = _decode(HEADER_DECODER, data)
    if header.format != FORMAT_NAME:
        raise SessionFileError("format", f"expected {FORMAT_NAME!r}; is this a session file?")
    version = header.version
    if not isinstance(version, int):
        raise SessionFileError("version", "expected a whole number")
    if version > FORMAT_VERSION:
        raise SessionFileError(
            "version", f"{version} is newer than this app reads ({FORMAT_VERSION}); update the app"
        )
    if version < 1:
        raise SessionFileError("version", f"{version} is not a known version")


def _config_values(fields: ConfigFields, mode: str, arrays: dict) -> dict[str, Any]:
    """AttentionConfig keyword arguments: the file's settings, sizes inferred where omitted."""
    values = given(fields)
    if values.setdefault("mode", mode) != mode:
        raise SessionFileError(
            "config.mode", f"says {values['mode']!r} but inputs.mode is {mode!r}"
        )
    if "padded_keys" in values:
        values["padded_keys"] = tuple(values["padded_keys"])
    if values.get("custom_mask") is not None:
        values["custom_mask"] = tuple(tuple(row) for row in values["custom_mask"])
    if "rope_parameters" in values:  # sorted (name, value) pairs, lists as tuples
        given_rope = values["rope_parameters"]
        values["rope_parameters"] = tuple(
            sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in given_rope.items())
        )
    for key in ("scale_factor", "temperature", "rope_theta", "rope_factor", "qk_norm_eps"):
        if key in values:
            values[key] = float(values[key])
    for key in ("softcap", "rotary_fraction"):
        if values.get(key) is not None:
            values[key] = float(values[key])
    if mode == "projection":
        _infer_projection_sizes(values, arrays)
    return values


def _infer_projection_sizes(values: dict[str, Any], arrays: dict) -> None:
    """d_model from X's columns, d_k from W_Q's and d_v from W_V's, where the file omits them."""
    X, W_Q, W_V = arrays.get("X"), arrays.get("W_Q"), arrays.get("W_V")
    if "d_model" not in values and X is not None and X.ndim == 2:
        values["d_model"] = int(X.shape[1])
    draft = AttentionConfig(**{k: v for k, v in values.items() if k not in ("d_k", "d_v")})
    heads, kv = draft.heads, values.get("kv_heads") or draft.heads
    if "d_k" not in values and W_Q is not None and W_Q.ndim == 2 and W_Q.shape[1] % heads == 0:
        if W_Q.shape[1] // heads not in (0, draft.head_dim):
            values["d_k"] = W_Q.shape[1] // heads
    head_dim = values.get("d_k") or draft.head_dim
    if "d_v" not in values and W_V is not None and W_V.ndim == 2 and W_V.shape[1] % kv == 0:
        if W_V.shape[1] // kv not in (0, head_dim):
            values["d_v"] = W_V.shape[1] // kv


def _shaped(arrays: dict, mode: str, allowed: tuple[str, ...]) -> dict:
    """``arrays`` checked against the mode, a single direct-mode head given its heads level."""
    for key, array in arrays.items():
        if key not in allowed:
            raise SessionFileError(key, f"not used in {mode} mode; expected {', '.join(allowed)}")
        if mode == "direct" and key in ("Q", "K", "V") and array.ndim == 2:
            arrays[key] = array[None]  # a single head may be written as tokens x d  # [1, n, d]
    return arrays


def _build(file: SessionFile) -> SessionData:
    """SessionData from a decoded file: matrices, settings, then shapes, tokens and budget."""
    mode = file.inputs.mode
    raw_inputs = [k for k in field_names(type(file.inputs)) if k != "mode"]
    raw_inputs = [k for k in raw_inputs if getattr(file.inputs, k) is not msgspec.UNSET]
    allowed = DIRECT_NAMES if mode == "direct" else PROJECTION_NAMES
    arrays = {}
    for key in raw_inputs:
        if key not in allowed:
            raise SessionFileError(
                f"inputs.{key}", f"not used in {mode} mode; expected {', '.join(allowed)}"
            )
        arrays[key] = decode_matrix(key, getattr(file.inputs, key))
    arrays = _shaped(extra_arrays(file, arrays), mode, allowed)
    tokens = tuple(file.tokens)
    kv_tokens = tuple(file.kv_tokens) if file.kv_tokens is not msgspec.UNSET else ()
    try:
        config = AttentionConfig(**_config_values(file.config, mode, arrays))
        inputs = AttentionInputs(**arrays)
        config = resolve_config(config, inputs)
        n, m = validate_inputs(config, inputs)
        check_budget(config, n, m, heads_kept=1)  # every caller computes at least one head
    except AttentionInputError as exc:
        field = exc.field if "." in exc.field or exc.field == "tokens" else f"config.{exc.field}"
        raise SessionFileError(field, exc.message) from None
    if len(tokens) != n:
        raise SessionFileError(
            "tokens", f"expected {n} names (one per query row), got {len(tokens)}"
        )
    if config.attention == "cross" and len(kv_tokens) != m:
        raise SessionFileError(
            "kv_tokens", f"expected {m} names (one per key), got {len(kv_tokens)}"
        )
    return SessionData(
        tokens=tokens,
        kv_tokens=kv_tokens,
        config=config,
        inputs=inputs,
        name=file.name,
        description=file.description,
        notes=tuple((note.title, note.text) for note in file.notes),
        experiment=given(file.experiment),
    )


def load_session_bytes(data: bytes, name: str = "the file") -> SessionData:
    """The one loader: validate the bytes of a session file and build its :class:`SessionData`."""
    data = json_bytes(data, name)
    _check_header(data)
    return _build(_decode(SESSION_DECODER, data))


def load_session(path: str | os.PathLike) -> SessionData:
    """Read and validate a session file; raise :class:`SessionFileError` naming the problem."""
    path = Path(path)
    return load_session_bytes(read_file_bytes(path), path.name)


def loads_session(text: str | bytes) -> SessionData:
    """Parse session JSON text (strict JSON: no NaN or Infinity; a leading BOM is fine)."""
    if isinstance(text, str):
        try:
            text = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise SessionFileError(
                "", f"invalid Unicode: a lone surrogate at character {exc.start}"
            ) from None
    return load_session_bytes(text)


def session_from_dict(data: Any) -> SessionData:
    """Validate a parsed JSON document (dicts, lists, strings, numbers) as a session."""
    try:
        encoded = msgspec.json.encode(data)
    except (TypeError, ValueError, OverflowError, RecursionError, UnicodeEncodeError) as exc:
        raise SessionFileError("", f"not a JSON document: {exc}") from None
    return load_session_bytes(encoded)


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


def dumps_session(session: SessionData, *, standalone: bool = False) -> str:
    """The session as a file's JSON text: JSON numbers one row per line for readable diffs,
    a model session by reference, or every matrix in binary form when ``standalone``
    (:mod:`session.file_forms`)."""
    doc, _form = file_dict(session_to_dict(session), session, standalone)
    return json.dumps(doc, indent=1) + "\n"


def _non_finite(session: SessionData) -> str | None:
    """The first matrix holding NaN or infinity, as ``inputs.NAME [i, j]``; None if all finite."""
    for name, array in session.inputs.arrays().items():
        values = np.asarray(array, dtype=np.float64)  # any shape
        bad = np.argwhere(~np.isfinite(values))  # [count, ndim]
        if bad.size:
            where = ", ".join(str(int(k)) for k in bad[0])
            return f"inputs.{name} [{where}] is {float(values[tuple(bad[0])])}"
    return None


def checked_session_bytes(
    session: SessionData, name: str = "the file", *, standalone: bool = False
) -> bytes:
    """The bytes :func:`save_session` writes, checked by the same loader that will read them.

    Raises :class:`SessionFileError` ("not saved: ...") for a session the app would then refuse
    to open: NaN or infinite numbers, a name or text over the limits, too many tokens.
    """
    problem = _non_finite(session)
    if problem:
        raise SessionFileError("", f"not saved: {problem}; session files hold finite numbers only")
    text = dumps_session(session, standalone=standalone).encode("utf-8")
    try:
        load_session_bytes(text, name)
    except SessionFileError as exc:
        raise SessionFileError("", f"not saved: {name} would not open again ({exc})") from None
    return text


def save_session(
    path: str | os.PathLike,
    session: SessionData,
    *,
    allow_read_only: bool = False,
    standalone: bool = False,
) -> Path:
    """Write ``session`` atomically (temporary file, then rename), keeping the file's mode.

    The text is first checked by the loader (:func:`checked_session_bytes`), so the app never
    writes a file it would refuse to open. The output policy applies
    (:mod:`attention_explorer.writing.output_policy`): a regular file or a new name, a symlink only
    when it is the user's and points to a regular file, a read-only file only with
    ``allow_read_only``. A model session is saved by reference to its model, anything else as
    JSON numbers; ``standalone`` embeds every matrix in binary form (:mod:`session.file_forms`).
    Raises :class:`SessionFileError` (one line) on failure.
    """
    from attention_explorer.writing.atomic import atomic_file
    from attention_explorer.writing.export_errors import ExportError
    from attention_explorer.writing.output_policy import OutputRefused, check_output

    path = Path(path)
    try:
        check_output(path, allow_read_only=allow_read_only)  # before any work
    except OutputRefused as exc:
        raise SessionFileError("", str(exc)) from None
    text = checked_session_bytes(session, path.name, standalone=standalone)
    try:
        with atomic_file(path, allow_read_only) as handle:
            handle.write(text)
    except ExportError as exc:
        raise SessionFileError("", str(exc)) from None
    return path
