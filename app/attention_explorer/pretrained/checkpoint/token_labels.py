"""Token pieces as a learner reads them: tokenizers mark word starts with ``Ġ`` (byte-level
BPE: GPT-2, Llama 3, Qwen2, where every byte is a printable stand-in: ``Ċ`` is a newline,
``âĢĻ`` is ``’``) or ``▁`` (SentencePiece: Llama 2, Mistral, with ``<0x0A>`` byte pieces).

:func:`readable_token` turns a piece into its text: the stand-ins back into the bytes they
stand for, decoded as UTF-8; the word-start mark dropped (the strip already separates the
tokens); a piece that is only spaces shown as ``␣``, newlines and tabs anywhere as ``↵`` and
``⇥``, and any other control character by its code (``\\x1a``), so no label is blank; bytes
that are part of a character split across pieces as ``\\xNN``. WordPiece pieces (BERT's
``##ing``) and special tokens (``<s>``, ``<|endoftext|>``) stay as they are.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache

#: How a tokenizer marks its pieces: "bytelevel" (Ġ), "metaspace" (▁) or "plain".
STYLES = ("bytelevel", "metaspace", "plain")

_WHITESPACE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@lru_cache(maxsize=1)
def _byte_of() -> dict[str, int]:
    """GPT-2's byte-to-printable-character table, inverted: character -> byte."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    keep += range(ord("®"), ord("ÿ") + 1)
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def _visible(char: str) -> str:
    """``char``, or a visible sign for it: a tab or newline by its sign, any other control or
    format character (``\x1a``, a zero-width joiner) as its code, so no label is blank."""
    if char in _WHITESPACE and char != " ":
        return _WHITESPACE[char]
    if unicodedata.category(char)[0] == "C":
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def _show(text: str) -> str:
    stripped = text.strip(" ")
    if not stripped:
        return "␣" * max(1, len(text))
    return "".join(_visible(c) for c in stripped)


def _bytelevel(piece: str) -> str:
    table = _byte_of()
    if not piece or any(c not in table for c in piece):
        return piece  # a special token or a piece not in the byte alphabet
    raw = bytes(table[c] for c in piece)
    return raw.decode("utf-8", errors="backslashreplace")


def _metaspace(piece: str) -> str:
    if _BYTE_PIECE.fullmatch(piece):
        raw = bytes([int(_BYTE_PIECE.fullmatch(piece).group(1), 16)])
        return raw.decode("utf-8", errors="backslashreplace")
    return piece.replace("▁", " ")


def readable_token(piece: str, style: str) -> str:
    """``piece`` as text (see the module docstring); ``style`` is one of :data:`STYLES`."""
    if style == "bytelevel":
        text = _bytelevel(piece)
    elif style == "metaspace":
        text = _metaspace(piece)
    else:
        return piece
    return _show(text) if text else piece


def readable_tokens(pieces: Sequence[str], style: str) -> tuple[str, ...]:
    """Every piece of ``pieces`` through :func:`readable_token`."""
    return tuple(readable_token(p, style) for p in pieces)


def _types(node) -> list[str]:
    """Every ``type`` named in a tokenizer.json component (nested sequences included)."""
    if isinstance(node, Mapping):
        found = [str(node.get("type", ""))]
        for value in node.values():
            found += _types(value)
        return found
    if isinstance(node, list):
        return [t for item in node for t in _types(item)]
    return []


def token_style(tokenizer_json: Mapping) -> str:
    """The marking style of a tokenizer.json (parsed): ``bytelevel`` when its decoder or
    pre-tokenizer is ByteLevel, ``metaspace`` when it is Metaspace or replaces ``▁``,
    else ``plain``."""
    parts = [tokenizer_json.get("decoder"), tokenizer_json.get("pre_tokenizer")]
    kinds = _types(parts)
    if "ByteLevel" in kinds:
        return "bytelevel"
    if "Metaspace" in kinds or "▁" in str(tokenizer_json.get("decoder")):
        return "metaspace"
    return "plain"


def _component(part) -> object:
    try:
        return json.loads(part.__getstate__()) if part is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def tokenizer_style(tokenizer) -> str:
    """The marking style of a loaded ``tokenizers.Tokenizer`` (its decoder and
    pre-tokenizer, read without serialising the whole vocabulary)."""
    parts = {
        "decoder": _component(getattr(tokenizer, "decoder", None)),
        "pre_tokenizer": _component(getattr(tokenizer, "pre_tokenizer", None)),
    }
    return token_style(parts)
