"""Token pieces shown readably: Ġ (byte-level BPE) and ▁ (SentencePiece) marks, byte
stand-ins, whitespace pieces; WordPiece and special tokens left alone."""

from __future__ import annotations

import json

import pytest

from attention_explorer.pretrained.checkpoint.token_labels import (
    readable_token,
    readable_tokens,
    token_style,
)
from tests.models.conftest import train_bpe


@pytest.mark.parametrize(
    ("piece", "style", "shown"),
    [
        ("Ġcat", "bytelevel", "cat"),
        ("The", "bytelevel", "The"),
        ("âĢĻ", "bytelevel", "’"),
        ("Ċ", "bytelevel", "↵"),
        ("ĊĊ", "bytelevel", "↵↵"),
        ("Ġ", "bytelevel", "␣"),
        ("ĠĠĠ", "bytelevel", "␣␣␣"),
        ("âĢ", "bytelevel", "\\xe2\\x80"),  # half a character: its bytes
        ("<|endoftext|>", "bytelevel", "<|endoftext|>"),
        ("▁cat", "metaspace", "cat"),
        ("ing", "metaspace", "ing"),
        ("▁", "metaspace", "␣"),
        ("<0x0A>", "metaspace", "↵"),
        ("<0x1A>", "metaspace", "\\x1a"),  # a control byte: its code, never a blank label
        ("Ě", "bytelevel", "\\x1a"),  # the same byte through GPT-2's byte table
        ("Ā", "bytelevel", "\\x00"),
        ("aĊb", "bytelevel", "a↵b"),  # a newline inside a piece, too
        ("<s>", "metaspace", "<s>"),
        ("##ing", "plain", "##ing"),
        ("Ġcat", "plain", "Ġcat"),
    ],
)
def test_pieces_read_as_text(piece, style, shown):
    assert readable_token(piece, style) == shown


def test_a_real_byte_level_tokenizer(tmp_path):
    from tokenizers import Tokenizer

    train_bpe(tmp_path)
    spec = json.loads((tmp_path / "tokenizer.json").read_text())
    assert token_style(spec) == "bytelevel"
    tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    pieces = tokenizer.encode("The cat sat on the mat\nend").tokens
    assert any(p.startswith("Ġ") for p in pieces)
    shown = readable_tokens(pieces, "bytelevel")
    assert not any("Ġ" in t or "Ċ" in t for t in shown)
    assert "".join(shown).replace("␣", "").replace("↵", "\n") == "Thecatsatonthemat\nend"


def test_styles_of_tokenizer_json():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE(vocab={"▁a": 0, "a": 1, "▁": 2}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    assert token_style(json.loads(tok.to_str())) == "metaspace"
    llama2 = {
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"},
            ],
        }
    }
    assert token_style(llama2) == "metaspace"
    assert token_style({"decoder": {"type": "WordPiece"}}) == "plain"


def test_a_model_run_shows_its_pieces_readably(tmp_path):
    from tokenizers import Tokenizer

    from attention_explorer.pretrained.checkpoint.token_labels import tokenizer_style

    train_bpe(tmp_path)
    tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert tokenizer_style(tokenizer) == "bytelevel"
    from attention_explorer.pretrained.checkpoint.tokenize import tokenize

    toks = tokenize(tokenizer, "the cat watched the dog", 64)
    raw = tokenizer.encode("the cat watched the dog").tokens
    assert any(p.startswith("Ġ") for p in raw) and not any("Ġ" in t for t in toks.tokens)
    assert toks.ids == tuple(tokenizer.encode("the cat watched the dog").ids)
