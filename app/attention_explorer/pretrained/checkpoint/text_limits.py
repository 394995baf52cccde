"""A cheap bound on the text a model is asked to read, checked before tokenizing any of it.

``ae.model_attention(model, "a" * 10_000_000)`` must not spend 20 s and 800 MB to find out
that the text is too long. No tokenizer splits text into tokens of more than
:data:`CHARS_PER_POSITION` characters on average in practice, so a text longer than the model's
positions times that is refused at once, in O(1), naming both numbers. The positions are read
from the folder's ``config.json`` when the model is a local folder (a small JSON file only);
otherwise the app's token limit bounds the text.
"""

from __future__ import annotations

import os
from pathlib import Path

from attention_explorer.engine.budget import MAX_TOKENS
from attention_explorer.pretrained.checkpoint.safe_paths import read_json
from attention_explorer.pretrained.model_errors import ModelError

#: Characters allowed per model position (generous: English runs about 4 per token).
CHARS_PER_POSITION = 64
#: config.json keys that give a model's positions, in the order they are looked for.
POSITION_KEYS = ("max_position_embeddings", "n_positions", "n_ctx")
#: A config.json larger than this is not read here (the loader reports it).
CONFIG_BYTES = 1_000_000


def model_positions(model) -> int | None:
    """The positions a local model folder declares in config.json (or a loaded model's);
    None if unknown. config.json is read only when it is a regular file within its budget."""
    weights = getattr(model, "weights", None)
    if weights is not None and isinstance(getattr(weights, "max_positions", None), int):
        return min(weights.max_positions, MAX_TOKENS)
    if not isinstance(model, (str, os.PathLike)):
        return None
    config = Path(model).expanduser() / "config.json"
    try:
        data = read_json(config, CONFIG_BYTES)
    except ModelError:
        return None  # the loader names the problem with the folder
    if not isinstance(data, dict):
        return None
    for key in POSITION_KEYS:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return min(value, MAX_TOKENS)
    return None


def text_char_limit(model) -> int:
    """The most characters of text ``model`` is asked to read."""
    return (model_positions(model) or MAX_TOKENS) * CHARS_PER_POSITION


def check_text(text: object, limit: int, holds: str) -> None:
    """ModelError("text") at once, before any tokenizing, when ``text`` is not a string, is
    longer than ``limit`` characters (``holds`` says whose limit) or is not Unicode text (a
    lone surrogate, which no tokenizer can read)."""
    if not isinstance(text, str):
        raise ModelError("text", f"the text must be a string, not {type(text).__name__}")
    if len(text) > limit:
        raise ModelError(
            "text",
            f"the text has {len(text):,} characters, more than {holds} can hold "
            f"(at most {limit:,} characters are read); shorten the text",
        )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ModelError(
                "text",
                f"the text holds a lone surrogate (U+{ord(text[exc.start]):04X}) at character "
                f"{exc.start}, which is not Unicode text; remove it",
            ) from None


def check_text_length(model, text: str) -> None:
    """Raise ModelError("text") at once if ``text`` is longer than ``model`` could take (or
    is not a Unicode string: :func:`check_text`). Costs a stat and a small config.json."""
    positions = model_positions(model)
    holds = f"this model's {positions} positions" if positions else "this app's token limit"
    check_text(text, (positions or MAX_TOKENS) * CHARS_PER_POSITION, holds)
