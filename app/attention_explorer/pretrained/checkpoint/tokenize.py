"""The model's own tokenizer (``tokenizer.json``), with padding and truncation switched off;
its pieces shown readably (``Ġcat`` and ``▁cat`` as ``cat``: :mod:`.token_labels`).

What the model sees is what ``tokenizer.json`` says, as transformers' ``AutoTokenizer``
encodes it:

- **BOS.** The post-processor adds it (Llama 2's ``<s>``, Llama 3's ``<|begin_of_text|>``
  by a TemplateProcessing) or not (Qwen2 has none). tokenizer_config.json's
  ``add_bos_token`` / ``add_eos_token`` are not read: transformers drops them too when a
  tokenizer.json is present, so the BOS is never added twice by the two.
- **Special tokens typed in the text** (``<|start_header_id|>``, ``<|eot_id|>``,
  ``<|im_start|>``…) are one token each, as the tokenizer's added tokens.
- **A BOS typed at the start** of the text, as a rendered chat template begins
  (``<|begin_of_text|><|start_header_id|>user…``), stands for the BOS the post-processor
  adds: it is kept once, never doubled (transformers would give it twice; its
  ``apply_chat_template`` tokenizes without the post-processor, which gives it once).
- **Llama 2's ▁.** tokenizer.json's normalizer (Prepend "▁", spaces to "▁") is followed as
  shipped, which is SentencePiece's dummy prefix: every piece of text gets its "▁", also
  after a special token (``</s>sat`` -> ``</s> ▁sat``) and before leading spaces. transformers
  5's LlamaTokenizer rebuilds that step (``legacy=False``: no "▁" after a special token, one
  less before leading spaces), so there, and only there, its ids differ from the shipped
  file's; plain text and chat text with spaces around its tokens are the same.
- **Chat templates** (``chat_template`` in tokenizer_config.json, Jinja) are never rendered
  (no Jinja, no eval): the learner's text is what the model reads, so a plain text is seen
  as BOS + text. To see a chat turn, type it with its special tokens.
- **Bounds.** tokenizer.json is read only as a regular file within its size budget, and a
  tokenizer whose regexes or replacements could run away encodes in a worker process with a
  time and memory budget (:mod:`.tokenize_bounded`); a Rust panic is a ModelError. The text is
  checked first (its length against the positions, no lone surrogate), and type ids beyond
  config.json's ``type_vocab_size`` are refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from attention_explorer.pretrained.checkpoint.safe_paths import budget_of, read_json, read_small
from attention_explorer.pretrained.checkpoint.text_limits import CHARS_PER_POSITION, check_text
from attention_explorer.pretrained.checkpoint.token_labels import readable_token, tokenizer_style
from attention_explorer.pretrained.checkpoint.tokenize_bounded import (
    BoundedTokenizer,
    unbounded_reason,
)
from attention_explorer.pretrained.model_errors import (
    ModelError,
    is_panic,
    panic_message,
    require_extra,
)


@dataclass(frozen=True)
class Tokens:
    """One tokenized text: the tokens as shown, their ids, BERT's type ids, and which are
    special tokens (BOS, [CLS], chat tokens: shown as the tokenizer spells them)."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    type_ids: tuple[int, ...]
    special: tuple[bool, ...] = field(default=())


def load_tokenizer(folder: Path) -> BoundedTokenizer:
    """The ``tokenizers.Tokenizer`` of ``folder``, never padding and never truncating, its
    encoding bounded (:class:`~.tokenize_bounded.BoundedTokenizer`).

    The real all-MiniLM-L6-v2 tokenizer.json pads every text to 128 with [PAD] and truncates:
    both are switched off so the explorer sees exactly the text's tokens, and a text too long
    for the model is refused rather than cut. Only tokenizer.json is read (see the module
    docstring): tokenizer_config.json, its ``chat_template`` included, may be there or not;
    config.json gives ``type_vocab_size``.
    """
    tokenizers = require_extra("tokenizers")
    path = folder / "tokenizer.json"
    data = read_small(path, budget_of(path.name))  # a regular file within its budget
    try:
        tokenizer = tokenizers.Tokenizer.from_str(data.decode("utf-8-sig"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
    except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException
        if not (isinstance(exc, Exception) or is_panic(exc)):
            raise
        first = (str(exc).splitlines() or [""])[0]
        raise ModelError("files", f"{path} cannot be read: {first}") from None
    return BoundedTokenizer(tokenizer, path, unbounded_reason(tokenizer), _type_vocab(folder))


def _type_vocab(folder: Path) -> int | None:
    try:
        config = read_json(folder / "config.json")
    except ModelError:
        return None  # the loader reports config.json
    value = config.get("type_vocab_size") if isinstance(config, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def special_ids(tokenizer) -> frozenset[int]:
    """The ids of the tokenizer's special tokens (its added tokens marked special: BOS, EOS,
    [CLS], chat tokens), read from the tokenizer rather than from a list of names."""
    decoder = getattr(tokenizer, "get_added_tokens_decoder", None)
    if decoder is None:
        return frozenset()
    return frozenset(i for i, added in decoder().items() if getattr(added, "special", False))


def _added_lead(encoding) -> int:
    """How many tokens at the start the post-processor added (BOS) that the text itself
    repeats right after them (a BOS typed at the start): those are dropped, not doubled."""
    mask = encoding.special_tokens_mask  # 1 where the post-processor added a token
    lead = 0
    while lead < len(mask) and mask[lead]:
        lead += 1
    ids = encoding.ids
    if lead and ids[lead : 2 * lead] == ids[:lead] and not any(mask[lead : 2 * lead]):
        return lead
    return 0


def tokenize(tokenizer, text: str, max_positions: int) -> Tokens:
    """``text`` as the model's tokens; ModelError for empty text or more than the positions."""
    check_text(text, max_positions * CHARS_PER_POSITION, f"the model's {max_positions} positions")
    if not text.strip():
        raise ModelError("text", "the text is empty; type a sentence for the model to read")
    try:
        encoding = tokenizer.encode(text)
    except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException
        if not is_panic(exc):
            raise
        raise ModelError("tokenizer", panic_message(exc)) from None
    start = _added_lead(encoding)
    ids = tuple(encoding.ids[start:])
    count = len(ids)
    if count == 0:
        raise ModelError("text", "the tokenizer found no tokens in the text")
    if count > max_positions:
        raise ModelError(
            "text",
            f"the text is {count} tokens long, more than the model's {max_positions} positions; "
            "shorten it",
        )
    marked = special_ids(tokenizer)
    special = tuple(
        bool(added) or i in marked
        for i, added in zip(ids, encoding.special_tokens_mask[start:], strict=True)
    )
    style = tokenizer_style(tokenizer)
    pieces = tuple(  # Ġcat -> cat; <|begin_of_text|> as it is
        piece if is_special else readable_token(piece, style)
        for piece, is_special in zip(encoding.tokens[start:], special, strict=True)
    )
    type_ids = tuple(encoding.type_ids[start:])
    check_type_ids(
        type_ids, getattr(tokenizer, "type_vocab", None), "config.json's type_vocab_size"
    )
    return Tokens(pieces, ids, type_ids, special)


def check_type_ids(type_ids, rows: int | None, what: str) -> None:
    """A ModelError when a token type id is beyond ``rows`` (``what`` names where that
    number comes from); nothing when ``rows`` is None."""
    if rows is None or not type_ids:
        return
    worst = max(type_ids)
    if worst >= rows or min(type_ids) < 0:
        raise ModelError(
            "files",
            f"the tokenizer gives a token the type id {worst}, beyond the {rows} token types "
            f"of {what}: tokenizer.json's post-processor does not match the model",
        )
