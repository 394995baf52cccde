"""Text for a terminal: control characters shown escaped, so no text can drive the terminal.

A token such as ``"\\x1b[2J\\x1b[31mpwned\\x07"`` in a tokenizer, a session name, a file name in
an error: whatever the command line prints goes through :func:`escaped_streams`, which wraps
``sys.stdout`` and ``sys.stderr`` so that every control character (C0 but newline and tab, DEL,
C1, format characters such as the bidirectional overrides, line and paragraph separators) is
written as its Python escape (``\\x1b``, ``\\u202e``).
"""

from __future__ import annotations

import contextlib
import sys
import unicodedata
from collections.abc import Iterator
from typing import TextIO

#: Characters printed as they are although they are control characters.
_KEPT = frozenset("\n\t")
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape_char(char: str) -> str:
    if char in _KEPT or unicodedata.category(char) not in _ESCAPED_CATEGORIES:
        return char
    return ascii(char)[1:-1]


def terminal_text(text: str) -> str:
    """``text`` with every control character escaped (newline and tab kept)."""
    if text.isprintable() or text.isascii() and all(" " <= c < "\x7f" or c in _KEPT for c in text):
        return text
    return "".join(_escape_char(c) for c in text)


class EscapingStream:
    """A text stream that writes :func:`terminal_text` of everything to ``stream``."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` escaped; returns the length of ``text`` (as a stream does)."""
        self._stream.write(terminal_text(str(text)))
        return len(text)

    def writelines(self, lines) -> None:
        """Write every line escaped."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def escaped_streams() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` escape control characters."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(out), EscapingStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def counted(count: int, word: str, plural: str | None = None) -> str:
    """``count`` and ``word`` in agreement: ``1 head``, ``2 heads``, ``3 queries``."""
    return f"{count} {word if count == 1 else plural or word + 's'}"
