"""Model sessions saved by reference: the model's name, a fingerprint, and only what changed.

A session opened from a real model (``ae.from_model``, the Model panel) records where it came
from in ``experiment.model``. Saving it writes ``"model": {"id", "folder", "text", "layer",
"fingerprint", "changes", "arrays", "removed"}`` instead of every weight, so the file stays
small (a few kB for MiniLM) whatever the model. Opening it finds the model again, rebuilds the
layer with :func:`~attention_explorer.pretrained.open_model.from_model` and applies the changes: the
result is equal to the bit to the session that was saved.

The fingerprint covers every byte the model is read from: SHA-256 of config.json,
tokenizer.json, the shard index and the SHA-256 of each safetensors file's whole content,
computed once per file version in a process (about 1.8 GB/s, then a stat). Files saved
before it hold the earlier, sampled fingerprint (headers and 16 blocks of 4 kB per file),
which is still checked as it was (:mod:`~attention_explorer.pretrained.checkpoint.fingerprint`).

A changed fingerprint is refused (one line saying the checkpoint changed): the saved cells
were differences from numbers that are no longer there, so applying them would not give the
saved session. A missing model is refused naming the id, the folder and where it looked.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.engine import AttentionInputs
from attention_explorer.session.binary_arrays import decode_array, encode_array
from attention_explorer.session.document import SessionData
from attention_explorer.session.schema import binary_arrays
from attention_explorer.session.session_errors import SessionFileError

#: Above this share of changed cells, the whole array is saved instead of a cell list.
WHOLE_ARRAY_SHARE = 0.25


def origin_of(session: SessionData) -> dict | None:
    """The ``experiment.model`` record of a model session (name, folder, text, layer), or None."""
    origin = (session.experiment or {}).get("model")
    return origin if isinstance(origin, dict) and "text" in origin and "layer" in origin else None


def _same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cell-wise: do ``a`` and ``b`` (same shape, float64) hold the same bits? (-0.0 != 0.0)"""
    return a.view(np.uint64) == b.view(np.uint64)  # same shape as a


def _diff(name: str, base: np.ndarray | None, edited: np.ndarray, doc: dict) -> None:
    """Record how ``edited`` differs from the model's ``base``: nothing, cells, or all of it."""
    edited = np.ascontiguousarray(edited, dtype=np.float64)  # any shape
    if base is None or base.shape != edited.shape or edited.ndim > 2:
        doc["arrays"][name] = encode_array(edited)
        return
    base = np.ascontiguousarray(base, dtype=np.float64)  # same shape as edited
    grid = edited.reshape(-1, edited.shape[-1]) if edited.ndim else edited  # [rows, cols]
    changed = np.argwhere(~_same_bits(base.reshape(grid.shape), grid))  # [count, 2]
    if len(changed) > WHOLE_ARRAY_SHARE * grid.size:
        doc["arrays"][name] = encode_array(edited)
        return
    for row, col in changed.tolist():
        doc["changes"].append([name, row, col, float(grid[row, col])])


def reference_dict(session: SessionData, base: SessionData, origin: dict, print_: str) -> dict:
    """The ``"model"`` object of a file for ``session``, rebuilt from ``base`` on opening."""
    doc: dict = {
        "id": str(origin.get("name", "")),
        "text": origin["text"],
        "layer": int(origin["layer"]),
        "fingerprint": print_,
        "changes": [],
        "arrays": {},
        "removed": [],
    }
    if origin.get("folder"):
        doc["folder"] = str(origin["folder"])
    before, after = base.inputs.arrays(), session.inputs.arrays()
    doc["removed"] = sorted(set(before) - set(after))
    for name, array in after.items():
        _diff(name, before.get(name), array, doc)
    return doc


def apply_reference(base: AttentionInputs, ref, where: str = "model") -> dict[str, np.ndarray]:
    """The arrays of the saved session: ``base``'s, less ``removed``, with arrays and cells."""
    arrays = {k: np.array(v, dtype=np.float64) for k, v in base.arrays().items()}  # copies
    for name in ref.removed:
        arrays.pop(name, None)
    for name, blob in binary_arrays(ref.arrays).items():
        arrays[name] = decode_array(f"{where}.arrays.{name}", blob.dtype, blob.shape, blob.data)
    for k, (name, row, col, value) in enumerate(ref.changes):
        array = arrays.get(name)
        grid = None if array is None else array.reshape(-1, array.shape[-1])  # [rows, cols]
        if grid is None or row >= grid.shape[0] or col >= grid.shape[1]:
            shape = "absent" if array is None else f"of shape {list(array.shape)}"
            raise SessionFileError(
                f"{where}.changes[{k}]", f"cell ({name}, {row}, {col}) is outside {name} ({shape})"
            )
        grid[row, col] = value  # a view: writes into arrays[name]
    return arrays
