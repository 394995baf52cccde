"""Matrices of a session file: raw JSON to float64 numpy arrays, refusing bad data first.

Each matrix is decoded with a strict msgspec type of the right number of levels, so a string,
a boolean, a null, a number beyond float range or a list nested too deep is refused (with its
JSON path) before numpy sees it. Ragged rows are found in one pass. Cost: O(size of the text).
"""

from __future__ import annotations

from typing import Annotated

import msgspec
import numpy as np
from msgspec import Meta

from attention_explorer.session.session_errors import SessionFileError, path_of

_Number = float
_L1 = Annotated[list[_Number], Meta(min_length=1)]
_L2 = Annotated[list[_L1], Meta(min_length=1)]
_L3 = Annotated[list[_L2], Meta(min_length=1)]
_DECODERS = {
    1: msgspec.json.Decoder(_L1),
    2: msgspec.json.Decoder(_L2),
    3: msgspec.json.Decoder(_L3),
}
_WHAT = {
    1: "a list of numbers",
    2: "rows of numbers (a list of lists)",
    3: "heads of rows of numbers (a list of lists of lists)",
}

#: Levels each matrix may have (direct-mode Q, K, V may drop the heads level for one head).
LEVELS = {
    "Q": (3, 2), "K": (3, 2), "V": (3, 2), "b_Q": (1,), "b_K": (1,), "b_V": (1,), "b_O": (1,),
    "q_norm": (1,), "k_norm": (1,), "sinks": (1,),
}  # fmt: skip
DEFAULT_LEVELS = (2,)


def leading_levels(raw: bytes) -> int:
    """How many ``[`` open the value before its first number or other item (O(depth))."""
    levels = 0
    for byte in raw:
        if byte == 0x5B:  # [
            levels += 1
        elif byte not in b" \t\r\n":
            break
    return levels


def _check_rectangular(where: str, value: list, levels: int) -> tuple[int, ...]:
    """Shape of a decoded nested list; raise if rows differ in length. O(number of rows)."""
    if levels == 1:
        return (len(value),)
    inner: tuple[int, ...] | None = None
    for k, child in enumerate(value):
        shape = _check_rectangular(f"{where}[{k}]", child, levels - 1)
        if inner is None:
            inner = shape
        elif shape != inner:
            raise SessionFileError(where + f"[{k}]", "rows have different lengths")
    return (len(value), *(inner or ()))


def decode_matrix(name: str, raw: msgspec.Raw) -> np.ndarray:
    """``inputs.<name>`` as a float64 array; :class:`SessionFileError` names any bad cell."""
    where = f"inputs.{name}"
    data = bytes(raw)
    allowed = LEVELS.get(name, DEFAULT_LEVELS)
    levels = leading_levels(data)
    if levels not in allowed:
        expected = " or ".join(_WHAT[n] for n in allowed)
        got = "a single value" if levels == 0 else f"{levels} levels of lists"
        raise SessionFileError(where, f"expected {expected}, got {got}")
    try:
        value = _DECODERS[levels].decode(data)
    except msgspec.ValidationError as exc:
        raise SessionFileError(*path_of(str(exc), prefix=where)) from None
    _check_rectangular(where, value, levels)
    return np.array(value, dtype=np.float64)
