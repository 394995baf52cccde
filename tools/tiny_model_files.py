"""Writing the tiny model's folder: config.json + model.safetensors + tokenizer.json (a
word-level vocabulary), nothing else. Used by ``tools/train_tiny_model.py``."""

from __future__ import annotations

import json
from pathlib import Path


def save_tokenizer(folder: Path, words, unk: str) -> None:
    """tokenizer.json: ``words`` in id order, ``unk`` last; lowercased, split on whitespace."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    vocab = {w: i for i, w in enumerate(words)} | {unk: len(words)}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token=unk))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(folder / "tokenizer.json"))


def save(model, folder: Path, words, unk: str) -> None:
    """config.json + model.safetensors + tokenizer.json in ``folder`` (nothing else)."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    for extra in ("generation_config.json",):
        (folder / extra).unlink(missing_ok=True)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    save_tokenizer(folder, words, unk)
