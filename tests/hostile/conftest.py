"""Fixtures of the hostile catalogue: a tiny model folder whose tokenizer holds a token that is a
terminal escape sequence, built on the fly with tokenizers and transformers (safetensors)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # catalogue modules next to the tests

from outputs import ESCAPE_TOKEN  # noqa: E402


def has(module: str) -> bool:
    """True when ``module`` can be imported here."""
    return importlib.util.find_spec(module) is not None


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A random 1-layer, 2-head GPT-2 (d_model 8, 16 positions) whose word-level tokenizer
    splits on spaces only and knows ``hello``, ``world`` and :data:`ESCAPE_TOKEN`."""
    if not (has("transformers") and has("torch")):
        pytest.skip("transformers (and torch) not installed")
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = tmp_path_factory.mktemp("tiny-model")
    vocab = {"<unk>": 0, "hello": 1, "world": 2, ESCAPE_TOKEN: 3}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(folder / "tokenizer.json"))
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(vocab), n_positions=16, n_embd=8, n_layer=1, n_head=2)
    GPT2LMHeadModel(config).eval().save_pretrained(folder, safe_serialization=True)
    return folder
