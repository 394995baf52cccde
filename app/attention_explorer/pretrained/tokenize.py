"""The model's own tokenizer (``tokenizer.json``), with padding and truncation switched off;
its pieces shown readably (``Ġcat`` and ``▁cat`` as ``cat``: :mod:`.token_labels`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from attention_explorer.pretrained.errors import ModelError, require_extra
from attention_explorer.pretrained.token_labels import readable_tokens, tokenizer_style


@dataclass(frozen=True)
class Tokens:
    """One tokenized text: the tokenizer's own token strings and ids, and BERT's type ids."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    type_ids: tuple[int, ...]


def load_tokenizer(folder: Path):
    """The ``tokenizers.Tokenizer`` of ``folder``, never padding and never truncating.

    The real all-MiniLM-L6-v2 tokenizer.json pads every text to 128 with [PAD] and truncates:
    both are switched off so the explorer sees exactly the text's tokens, and a text too long
    for the model is refused rather than cut.
    """
    tokenizers = require_extra("tokenizers")
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as exc:
        raise ModelError("files", f"{folder / 'tokenizer.json'} cannot be read: {exc}") from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def tokenize(tokenizer, text: str, max_positions: int) -> Tokens:
    """``text`` as the model's tokens; ModelError for empty text or more than the positions."""
    if not isinstance(text, str) or not text.strip():
        raise ModelError("text", "the text is empty; type a sentence for the model to read")
    encoding = tokenizer.encode(text)
    count = len(encoding.ids)
    if count == 0:
        raise ModelError("text", "the tokenizer found no tokens in the text")
    if count > max_positions:
        raise ModelError(
            "text",
            f"the text is {count} tokens long, more than the model's {max_positions} positions; "
            "shorten it",
        )
    pieces = readable_tokens(encoding.tokens, tokenizer_style(tokenizer))  # Ġcat -> cat
    return Tokens(pieces, tuple(encoding.ids), tuple(encoding.type_ids))
