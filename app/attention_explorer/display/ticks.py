"""Axis ticks: token names on the axes and round numbers on the colour bar."""

from __future__ import annotations

import math

from attention_explorer.core.numbers import MINUS

#: Token names longer than this are shortened on the axes (the tooltip has them in full).
MAX_TICK_CHARS = 9


def short_label(text: str, limit: int = MAX_TICK_CHARS) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tick_stride(count: int, pixels: float, needed: float, at_most: int = 24) -> int:
    """Label every k-th of ``count`` cells so labels ``needed`` pixels apart never overlap.

    k is 1, 2, 5, 10, 20, 50 ...; before anything has a size (``pixels`` <= 1), at most
    ``at_most`` labels.
    """
    if pixels <= 1:
        return max(1, -(-count // at_most))
    minimum = needed * count / pixels
    stride = 1
    while stride < minimum:
        stride = {1: 2, 2: 5}.get(int(str(stride)[0]), 10) * 10 ** (len(str(stride)) - 1)
    return stride


def axis_ticks(labels, stride: int, first: int = 0, block: int = 1) -> list[tuple[float, str]]:
    """(centre, short name) of every ``stride``-th label; ``first`` is the index of the first
    label shown and ``block`` how many full cells one shown cell stands for."""
    return [
        (first + (i + 0.5) * block, short_label(labels[i * block]))
        for i in range(0, -(-len(labels) // block), stride)
        if i * block < len(labels)
    ]


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
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else (abs(value) or 1.0)
    biggest = max(abs(t) for t in ticks) if ticks else abs(value)
    if biggest >= 1e5 or (biggest and biggest < 1e-3):
        return f"{value:.2g}".replace("e+0", "e").replace("e-0", "e-").replace("-", MINUS)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if abs(round(step * 10**decimals) - step * 10**decimals) > 1e-6:
        decimals += 1
    return f"{value:.{decimals}f}".replace("-", MINUS)
