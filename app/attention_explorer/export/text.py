"""Number formatting for pictures: short, with a real minus sign, never 'nan' or 'inf'."""

from __future__ import annotations

import math

MINUS = "\u2212"


def _minus(text: str) -> str:
    return text.replace("-", MINUS)


def cell_text(value: float, scientific: bool = False) -> str:
    """A cell's value in a few characters: ``0.42``, ``−1.30``, ``12.5``, ``340``, ``1.2e5``.

    Exact zeros read ``0``; other values below 0.005 read ``0.00`` (as in a table rounded to
    two places) unless ``scientific`` (for matrices whose values are all that small: ``3e−4``).
    Masked/non-finite values give ``×``: the picture never shows 'nan' or 'inf'.
    """
    value = float(value)
    if not math.isfinite(value):
        return "×"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e4 or (scientific and magnitude < 0.01):
        mantissa, exponent = f"{value:.1e}".split("e")
        return _minus(f"{mantissa.replace('.0', '')}e{int(exponent)}")
    if magnitude >= 100:
        return _minus(f"{value:.0f}")
    if magnitude >= 10:
        return _minus(f"{value:.1f}")
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else _minus(text)


def cell_texts(values) -> list[list[str]]:
    """:func:`cell_text` for every cell of a 2-D matrix, one style for the whole matrix."""
    finite = [float(v) for row in values for v in row if math.isfinite(float(v))]
    if finite and all(v.is_integer() and abs(v) < 1e4 for v in finite):
        return [[_minus(str(int(v))) if math.isfinite(float(v)) else "×" for v in row]
                for row in values]  # fmt: skip
    scientific = bool(finite) and 0 < max(abs(v) for v in finite) < 0.01
    return [[cell_text(v, scientific) for v in row] for row in values]


def nice_ticks(low: float, high: float, target: int = 5) -> list[float]:
    """Round ticks (steps of 1, 2, 2.5 or 5 x 10^k) inside [low, high], about ``target``."""
    span = high - low
    if not math.isfinite(span) or span <= 0:
        return [low]
    raw = span / target
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)
    first = math.ceil(low / step - 1e-9)
    ticks = []
    k = first
    while k * step <= high + step * 1e-9:
        ticks.append(0.0 if abs(k * step) < step * 1e-9 else k * step)
        k += 1
    return ticks


def tick_text(value: float, ticks: list[float]) -> str:
    """A colour-bar tick label with as many decimals as the tick step needs."""
    if len(ticks) > 1:
        step = abs(ticks[1] - ticks[0])
    else:
        step = abs(value) or 1.0
    biggest = max(abs(t) for t in ticks) if ticks else abs(value)
    if biggest >= 1e5 or (biggest and biggest < 1e-3):
        return _minus(f"{value:.2g}".replace("e+0", "e").replace("e-0", "e-"))
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if abs(round(step * 10**decimals) - step * 10**decimals) > 1e-6:
        decimals += 1
    return _minus(f"{value:.{decimals}f}")
