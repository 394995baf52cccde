"""Fixtures of the hostile model files: the tiny GPT-2 of :mod:`hostile_files`, copied per
test and then spoiled."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helper modules next to the tests

from hostile_files import gpt2_config, gpt2_tensors, word_tokenizer, write_safetensors  # noqa: E402


@pytest.fixture(scope="session")
def tiny_source(tmp_path_factory) -> Path:
    """The tiny GPT-2 folder, written once (copy it with :func:`model` before spoiling)."""
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    (folder / "config.json").write_text(json.dumps(gpt2_config()))
    write_safetensors(folder / "model.safetensors", gpt2_tensors())
    word_tokenizer(folder / "tokenizer.json")
    return folder


@pytest.fixture
def model(tiny_source, tmp_path) -> Path:
    """A fresh copy of the tiny GPT-2 (this test may spoil it)."""
    folder = tmp_path / "tiny"
    shutil.copytree(tiny_source, folder)
    return folder
