"""Arrays of a session file in binary form: base64 of little-endian float32 or float64 numbers.

Used by standalone saves (``"arrays"`` at the top of the file) and by model-reference saves
(whole arrays the learner replaced). One array is ``{"dtype": "<f8", "shape": [n, d],
"data": "<base64>"}``. Decoding checks the dtype, the shape and the byte count before numpy
reads anything, refuses NaN and infinity, and always gives float64 (the engine's dtype). No
pickle: the bytes are read with :func:`numpy.frombuffer` only.
"""

from __future__ import annotations

import base64
import binascii

import numpy as np

from attention_explorer.session.session_errors import SessionFileError

#: Storage dtypes a file may name, and their item size in bytes.
DTYPES = {"<f4": 4, "<f8": 8}


def _storage_dtype(array: np.ndarray) -> str:
    """``<f4`` when float32 holds every value exactly (checkpoint weights), else ``<f8``."""
    values = np.asarray(array, dtype=np.float64)  # any shape
    narrow = values.astype(np.float32).astype(np.float64)  # same shape
    same = np.array_equal(narrow.view(np.uint64), values.view(np.uint64))
    return "<f4" if same else "<f8"


def encode_array(array: np.ndarray) -> dict:
    """``array`` (any shape, float) as a binary-array object; exact to the bit."""
    values = np.ascontiguousarray(array, dtype=np.float64)  # any shape
    dtype = _storage_dtype(values)
    raw = values.astype(dtype).tobytes()
    return {
        "dtype": dtype,
        "shape": [int(k) for k in values.shape],
        "data": base64.b64encode(raw).decode("ascii"),
    }


def decode_array(where: str, dtype: str, shape: list[int], data: str) -> np.ndarray:
    """The float64 array a binary-array object holds; SessionFileError (one line) if wrong."""
    if dtype not in DTYPES:
        raise SessionFileError(f"{where}.dtype", f"expected one of {', '.join(DTYPES)}")
    count = 1
    for size in shape:
        count *= size
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise SessionFileError(f"{where}.data", "not valid base64") from None
    expected = count * DTYPES[dtype]
    if len(raw) != expected:
        raise SessionFileError(
            f"{where}.data",
            f"holds {len(raw)} bytes; shape {list(shape)} of {dtype} needs {expected}",
        )
    values = np.frombuffer(raw, dtype=dtype).astype(np.float64).reshape(shape)  # shape
    bad = np.argwhere(~np.isfinite(values))  # [count, ndim]
    if bad.size:
        cell = ", ".join(str(int(k)) for k in bad[0])
        raise SessionFileError(where, f"[{cell}] is not a finite number")
    return values
