"""The three forms a session file can take, and how each one's matrices are read back.

- **JSON numbers** (the original form): every matrix as nested lists in ``inputs``. Readable
  diffs; the default for sessions that do not come from a model.
- **Model reference** (the default for a model session): ``inputs`` holds only the mode, and
  ``model`` names the model, text, layer and fingerprint, with only the cells the learner
  changed (:mod:`session.model_reference`). At most a few kB unless most numbers changed.
- **Standalone**: ``inputs`` holds only the mode and ``arrays`` every matrix in binary form
  (:mod:`session.binary_arrays`): needs no model to open. ``standalone=True`` asks for it; a
  model session whose model cannot be found at save time is saved this way too.
"""

from __future__ import annotations

import numpy as np
from msgspec import UNSET

from attention_explorer.session.binary_arrays import decode_array, encode_array
from attention_explorer.session.document import SessionData
from attention_explorer.session.model_links import installed_model_lookup
from attention_explorer.session.model_reference import (
    apply_reference,
    origin_of,
    reference_dict,
)
from attention_explorer.session.schema import binary_arrays
from attention_explorer.session.session_errors import SessionFileError

JSON, REFERENCE, STANDALONE = "json", "reference", "standalone"


def _binary_inputs(doc: dict, session: SessionData) -> dict:
    """``doc`` with ``inputs`` reduced to the mode and the matrices under ``arrays``."""
    doc["inputs"] = {"mode": doc["inputs"]["mode"]}
    doc["arrays"] = {k: encode_array(v) for k, v in session.inputs.arrays().items()}
    return doc


def file_dict(doc: dict, session: SessionData, standalone: bool = False) -> tuple[dict, str]:
    """(the document to write, its form) for ``session``, whose JSON-numbers document is ``doc``.

    A model session is saved by reference unless ``standalone`` (or its model is missing now);
    any other session keeps JSON numbers unless ``standalone``.
    """
    origin = origin_of(session)
    if standalone:
        return _binary_inputs(doc, session), STANDALONE
    if origin is None:
        return doc, JSON
    lookup = installed_model_lookup()
    found = lookup.base_for_saving(origin) if lookup is not None else None
    if found is None:
        return _binary_inputs(doc, session), STANDALONE
    base, print_ = found
    doc["inputs"] = {"mode": doc["inputs"]["mode"]}
    doc["model"] = reference_dict(session, base, origin, print_)
    return doc, REFERENCE


def extra_arrays(file, json_arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The matrices of a decoded file: JSON ones, binary ``arrays``, or rebuilt from ``model``."""
    arrays = dict(json_arrays)
    if file.model is not UNSET:
        if arrays:
            raise SessionFileError(
                "inputs", "a model reference file keeps its numbers in model, not in inputs"
            )
        lookup = installed_model_lookup()
        if lookup is None:
            raise SessionFileError(
                "model",
                "this file keeps its numbers by reference to a model, and the model support "
                "(attention_explorer.pretrained) is not loaded",
            )
        ref = file.model
        base = lookup.rebuild(ref.id, ref.folder or None, ref.fingerprint, ref.text, ref.layer)
        arrays = apply_reference(base.inputs, ref)
    if file.arrays is not UNSET:
        for name, blob in binary_arrays(file.arrays).items():
            if name in arrays:
                raise SessionFileError(f"arrays.{name}", f"{name} is also given elsewhere")
            arrays[name] = decode_array(f"arrays.{name}", blob.dtype, blob.shape, blob.data)
    return arrays
