"""The causal tools' models: the random GPT-2 of tests/models/conftest.py, a random Llama
(GQA 4/2, tests/models/test_llama_family.make_checkpoint) and the shipped tiny-induction,
each with a clean and a corrupted prompt of the same length and an answer/wrong pair."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.models.conftest import gpt2_folder  # noqa: F401  (a fixture, used by name)

TINY = Path(__file__).resolve().parents[2] / "resources" / "models" / "tiny-induction"
RUN = "lion bear wolf frog duck goat swan crab".split()
SHUFFLED = "goat crab lion swan bear duck frog wolf".split()
PREFIX = "owl hen pig".split()
#: tiny-induction: the run repeated, cut before its last word (the model should copy "crab");
#: corrupted, the first run shuffled (after "swan" came "bear": the copy there is "bear").
TINY_CLEAN = " ".join(PREFIX + RUN + RUN[:-1])
TINY_CORRUPTED = " ".join(PREFIX + SHUFFLED + RUN[:-1])
BPE_CLEAN = "The cat sat on the mat because it was"
BPE_CORRUPTED = "The token sat on the mat because it was"


@dataclass(frozen=True)
class Case:
    """A model folder, two prompts of the same length and the answer/wrong token ids."""

    name: str
    folder: Path
    clean: str
    corrupted: str
    answer: int
    wrong: int


def tokens_of(folder: Path, text: str) -> tuple[int, ...]:
    """The model's own token ids of ``text``."""
    from attention_explorer.pretrained.open_model import load_model

    return load_model(folder).tokenize(text).ids


def case_for(name: str, folder: Path, clean: str, corrupted: str) -> Case:
    """The clean run's best token as the answer, the corrupted run's best other token as the
    wrong one (so the metric differs between the prompts)."""
    import attention_explorer as ae

    assert len(tokens_of(folder, clean)) == len(tokens_of(folder, corrupted))
    first = ae.model_run(folder, clean, dtype="float64").logits[-1]  # [vocab]
    second = ae.model_run(folder, corrupted, dtype="float64").logits[-1]
    answer = int(np.argmax(first))
    wrong = next(int(t) for t in np.argsort(-second, kind="stable") if int(t) != answer)
    return Case(name, folder, clean, corrupted, answer, wrong)


@pytest.fixture(scope="session")
def llama_folder_causal(tmp_path_factory) -> Path:
    """A random 2-layer Llama (4 heads sharing 2 key/value heads, RMSNorm, RoPE)."""
    pytest.importorskip("transformers")
    from tests.models.test_llama_family import make_checkpoint

    folder = tmp_path_factory.mktemp("llama-causal")
    make_checkpoint(folder, "llama")
    return folder


@pytest.fixture(scope="session")
def cases(gpt2_folder, llama_folder_causal) -> dict[str, Case]:  # noqa: F811
    """The three models' cases by name: gpt2, llama, tiny."""
    return {
        "gpt2": case_for("gpt2", gpt2_folder, BPE_CLEAN, BPE_CORRUPTED),
        "llama": case_for("llama", llama_folder_causal, BPE_CLEAN, BPE_CORRUPTED),
        "tiny": case_for("tiny", TINY, TINY_CLEAN, TINY_CORRUPTED),
    }
