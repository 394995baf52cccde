"""Text that is safe to put in a picture or a CSV file: no control characters, no formulas.

Token names and titles come from user files. A NUL makes an SVG invalid XML and escape
sequences reach the terminal of whoever prints a CSV, so control characters (C0, DEL, C1) and
unpaired surrogates are replaced with U+FFFD. A CSV cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is run as a formula by spreadsheets; following OWASP's
CSV-injection guidance such a cell gets a leading single quote (token names only: numbers stay
numbers).
"""

from __future__ import annotations

import re

#: What replaces a control character or an unpaired surrogate.
REPLACEMENT = "\ufffd"
#: First characters that make a spreadsheet treat a cell as a formula (OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def plain_text(text: str) -> str:
    """``text`` with every control character and unpaired surrogate replaced by U+FFFD."""
    return _UNSAFE.sub(REPLACEMENT, str(text))


def csv_label(text: str) -> str:
    """A token name or header for a CSV cell: control characters replaced and, when a
    spreadsheet would run it as a formula, a leading single quote."""
    text = str(text)
    quoted = "'" + text if text.startswith(FORMULA_STARTS) else text
    return plain_text(quoted)
