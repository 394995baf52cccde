"""The one number formatter: how every number reads, in cells, tooltips, narration, exports, CLI.

The decimals policy: a number is written with a fixed count of decimals (``DEFAULT_DECIMALS``
unless a caller, a stage or the user asks for another), trailing zeros dropped, so 0.2483 reads
"0.2483" and 0.25 reads "0.25". A value that is not zero but rounds to zero reads "≈0", so a
tiny weight never looks like an exact zero. Magnitudes of 1e5 and more read in scientific
notation. Negative infinity (a masked score) reads "−∞"; the engine never gives NaN, but one
would read "—", never "nan". ``display`` text uses the typographic minus sign (U+2212);
plain text (the command line, copied numbers) uses the ASCII hyphen-minus.
"""

from __future__ import annotations

import math

#: Decimals when nobody asks for another count.
DEFAULT_DECIMALS = 4
#: From this magnitude on, numbers are written in scientific notation.
SCIENTIFIC_FROM = 1e5
MINUS = "\u2212"
APPROX_ZERO = "≈0"


def format_number(value: float, decimals: int = DEFAULT_DECIMALS, display: bool = False) -> str:
    """``value`` with at most ``decimals`` decimals: "0.2483", "-1.5", "3", "≈0", "1.2346e+05".

    ``display=True`` writes the minus as U+2212 and infinities as "−∞"/"∞" (screen and
    pictures); otherwise "-inf"/"inf" and an ASCII minus (command line, plain text).
    """
    value = float(value)
    decimals = max(0, int(decimals))
    if math.isnan(value):
        return "—"
    if math.isinf(value):
        text = "-∞" if value < 0 else "∞"
        if not display:
            text = "-inf" if value < 0 else "inf"
    elif value == 0:
        return "0"
    elif abs(value) >= SCIENTIFIC_FROM:
        text = f"{value:.{max(decimals, 1)}e}"
        mantissa, exponent = text.split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        text = f"{mantissa}e{exponent}"
    else:
        text = f"{value:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        if text in ("0", "-0"):
            return APPROX_ZERO
    return text.replace("-", MINUS) if display else text
