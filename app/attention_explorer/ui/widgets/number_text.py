"""Numbers as text, both ways, without Qt and without eval.

``parse_number`` reads one cell ("0.5", "-1e-3", "−2", "0,5"); ``parse_block`` reads a pasted
block: tab-separated spreadsheet text, rows of numbers separated by spaces, commas or
semicolons, or numpy-style text such as ``[[1, 2], [3, 4]]`` or ``array([[1., 2.]])``.
Anything else raises :class:`NumberTextError` with a message a person can act on.
Non-finite numbers and magnitudes beyond :data:`MAX_ABS_INPUT` are refused.
"""

from __future__ import annotations

import math
import re

import numpy as np

from attention_explorer.core import numbers
from attention_explorer.engine.inputs import MAX_ABS_INPUT

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
_MINUS_SIGNS = {"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-", "\uff0d": "-"}
_NAN_WORDS = {"nan", "+nan", "-nan"}
_INF_WORDS = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "∞", "-∞", "+∞"}
_MAX_BLOCK_CELLS = 1_000_000


class NumberTextError(ValueError):
    """Text that is not an acceptable number (or block of numbers); ``str()`` says why."""


def _clean(text: str) -> str:
    text = text.strip()
    for sign, ascii_minus in _MINUS_SIGNS.items():
        text = text.replace(sign, ascii_minus)
    return text


def _shown(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:21] + "...")


def parse_number(text: str) -> float:
    """The finite float written in ``text``; raises :class:`NumberTextError` otherwise.

    Accepts a leading sign (also the Unicode minus), exponents and a single decimal comma
    ("0,5"). Refuses empty text, words, nan, infinity and |x| > 1e30.
    """
    cleaned = _clean(text)
    if not cleaned:
        raise NumberTextError("empty: type a number such as 0.5")
    if _DECIMAL_COMMA.fullmatch(cleaned):
        cleaned = cleaned.replace(",", ".")
    lowered = cleaned.lower()
    if lowered in _NAN_WORDS:
        raise NumberTextError("nan (not a number) is refused: type a finite number such as 0.5")
    if lowered in _INF_WORDS:
        raise NumberTextError(f"infinity is refused: values must lie within ±{MAX_ABS_INPUT:g}")
    if not _NUMBER.fullmatch(cleaned):
        raise NumberTextError(f"{_shown(text.strip())} is not a number; type e.g. 0.5 or -1e-3")
    value = float(cleaned)  # the regex above admits only plain decimal literals
    if not math.isfinite(value) or abs(value) > MAX_ABS_INPUT:
        raise NumberTextError(
            f"{_shown(text.strip())} is too large: values must lie within ±{MAX_ABS_INPUT:g}"
        )
    return value + 0.0  # turns -0.0 into 0.0


def format_number(value: float) -> str:
    """Compact display text by the one decimals policy (:mod:`attention_explorer.core.numbers`):
    "0.5", "-1.2346", "3", "≈0" for a tiny non-zero value, "1e+08" from 1e5 on.

    Never returns "nan" or "inf": a non-finite value shows as "—" (editors never hold one).
    """
    value = float(value)
    if not math.isfinite(value):
        return "—"
    return numbers.format_number(value)


def format_exact(value: float) -> str:
    """Text that reads back to exactly ``value`` (the shortest round-trip form)."""
    value = float(value)
    if not math.isfinite(value):
        return "—"
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def format_block(block: np.ndarray) -> str:
    """Tab-separated rows of exact numbers, as spreadsheets paste them."""
    block = np.atleast_2d(np.asarray(block, dtype=np.float64))
    return "\n".join("\t".join(format_exact(x) for x in row) for row in block)


def _to_array(rows: list[list[float]]) -> np.ndarray:
    if not rows or not rows[0]:
        raise NumberTextError("there are no numbers to paste")
    width = len(rows[0])
    for r, row in enumerate(rows):
        if len(row) != width:
            raise NumberTextError(
                f"row {r + 1} has {len(row)} numbers but row 1 has {width}; "
                "every row needs the same count"
            )
    if len(rows) * width > _MAX_BLOCK_CELLS:
        raise NumberTextError(f"the block is too big ({len(rows)}x{width} numbers)")
    return np.array(rows, dtype=np.float64)


def _cell(text: str, row: int, column: int) -> float:
    try:
        return parse_number(text)
    except NumberTextError as error:
        raise NumberTextError(f"row {row + 1}, column {column + 1}: {error}") from None


def _parse_lines(text: str) -> np.ndarray:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    rows: list[list[float]] = []
    for r, line in enumerate(lines):
        if "\t" in line:
            cells = line.rstrip("\n").split("\t")
            if cells and not cells[-1].strip():
                cells.pop()  # spreadsheets may end a row with a tab
        else:
            cells = [c for c in re.split(r"[\s,;]+", line.strip()) if c]
        if not cells:
            raise NumberTextError(f"row {r + 1} is empty; remove blank lines between rows")
        rows.append([_cell(c, r, k) for k, c in enumerate(cells)])
    return _to_array(rows)


def _strip_array_call(text: str) -> str:
    match = re.fullmatch(r"(?:(?:np|numpy)\.)?array\s*\((.*)\)", text, flags=re.DOTALL)
    if not match:
        return text
    inner = match.group(1).strip()
    inner = re.sub(r",\s*dtype\s*=\s*[\w.]+\s*$", "", inner)  # array([...], dtype=float32)
    return inner.strip()


def _parse_bracketed(text: str) -> np.ndarray:
    tokens = re.findall(r"\[|\]|,|[^\s\[\],]+", text)
    stack: list[list] = []
    result: list | None = None
    for token in tokens:
        if token == "[":
            if result is not None:
                raise NumberTextError("text continues after the closing ']'")
            stack.append([])
            if len(stack) > 2:
                raise NumberTextError("only 1-D or 2-D blocks can be pasted (too many '[')")
        elif token == "]":
            if not stack:
                raise NumberTextError("a ']' has no matching '['")
            done = stack.pop()
            if stack:
                stack[-1].append(done)
            else:
                result = done
        elif token == ",":
            if not stack:
                raise NumberTextError("a ',' stands outside the brackets")
        else:
            if not stack:
                raise NumberTextError(f"{_shown(token)} stands outside the brackets")
            row = len(stack[0]) if len(stack) == 2 else 0
            stack[-1].append(_cell(token, row, len(stack[-1])))
    if stack or result is None:
        raise NumberTextError("a '[' is never closed")
    if result and all(isinstance(x, float) for x in result):
        return _to_array([result])
    if any(isinstance(x, float) for x in result):
        raise NumberTextError("mix of numbers and rows; write [[1, 2], [3, 4]] or [1, 2]")
    return _to_array(result)


def parse_block(text: str) -> np.ndarray:
    """A 2-D float array from pasted text; raises :class:`NumberTextError` naming the problem.

    Spreadsheet text (tab-separated rows), rows of numbers separated by spaces, commas or
    semicolons, and numpy-style text (``[[1, 2], [3, 4]]``, ``[1, 2, 3]`` as one row, or
    numpy's own ``[[1. 2.]\\n [3. 4.]]`` and ``array([[...]])``) are understood.
    """
    cleaned = _clean(text)
    if not cleaned:
        raise NumberTextError("the clipboard holds no numbers")
    cleaned = _strip_array_call(cleaned)
    if cleaned.startswith("["):
        return _parse_bracketed(cleaned)
    return _parse_lines(cleaned)
