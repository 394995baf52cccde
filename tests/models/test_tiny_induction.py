"""The bundled ``tiny-induction`` decoder copies through a previous-token head and an induction
head (issue 18, item 6; Olsson et al. 2022), measured on fresh random sequences.

Every sequence: a random prefix, a run of distinct random words of random length, the run again,
random words to the model's length; none of them is from the training stream (another seed).
The measures: the share of the repeated half's predictable words that the model's argmax gets
right, with every head and with one head knocked out (its rows of c_proj, W_O, zeroed); and each
head's attention signature: the previous-token score (weight on position i - 1) and Olsson et
al.'s induction score (weight on the key just after the earlier occurrence of the current word).
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

import attention_explorer as ae

FOLDER = Path(__file__).resolve().parents[2] / "resources" / "models" / "tiny-induction"
PREVIOUS_TOKEN_HEAD = (0, 0)
INDUCTION_HEAD = (1, 0)
SEED = 20261124  # not the training seed (tools/train_tiny_model.py)
COUNT = 64
SHORTEST, LONGEST = 4, 12

pytestmark = pytest.mark.skipif(
    not (FOLDER / "model.safetensors").is_file(),
    reason="tiny-induction is not shipped yet: tools/train_tiny_model.py has not yet trained a "
    "checkpoint with Olsson's induction head (see its docstring)",
)
needs_torch = pytest.mark.skipif(
    find_spec("torch") is None or find_spec("transformers") is None,
    reason="the transformers check needs torch and transformers",
)


def _config() -> dict:
    return json.loads((FOLDER / "config.json").read_text("utf-8"))


def _words() -> list[str]:
    vocab = json.loads((FOLDER / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
    return [w for w, _ in sorted(vocab.items(), key=lambda kv: kv[1]) if not w.startswith("[")]


def fresh_sequences(count: int = COUNT, seed: int = SEED):
    """ids [count, T] and mask [count, T]: True where ids[:, t + 1] is predictable by copying."""
    rng = np.random.default_rng(seed)
    length, vocab = _config()["n_positions"], len(_words())
    ids = rng.integers(0, vocab, size=(count, length))  # [count, T]
    mask = np.zeros((count, length), dtype=bool)  # [count, T]
    for b in range(count):
        run = int(rng.integers(SHORTEST, LONGEST + 1))
        prefix = int(rng.integers(0, length - 2 * run + 1))
        first = rng.permutation(vocab)[: prefix + run]  # [p + L] distinct words
        ids[b, : prefix + run] = first
        ids[b, prefix + run : prefix + 2 * run] = first[prefix:]
        mask[b, prefix + run : prefix + 2 * run - 1] = True
    return ids, mask


def copy_accuracy(logits: np.ndarray, ids: np.ndarray, mask: np.ndarray) -> float:
    """Share of the masked positions whose argmax is the next word; logits [B, T, V]."""
    predicted = logits.argmax(-1)[:, :-1]  # [B, T - 1]
    return float((predicted == ids[:, 1:])[mask[:, :-1]].mean())


def head_scores(attentions: np.ndarray, ids: np.ndarray, mask: np.ndarray):
    """(previous-token, induction) score of one head; attentions [B, T, T]."""
    rows = np.arange(1, ids.shape[1])
    previous = float(attentions[:, rows, rows - 1].mean())
    weights = []
    for b, t in zip(*np.nonzero(mask)):
        earlier = np.flatnonzero(ids[b, :t] == ids[b, t])  # the run's first occurrence
        weights.append(attentions[b, t, earlier[0] + 1])
    return previous, float(np.mean(weights))


def test_the_folder_is_a_small_gpt2_whose_mlps_add_nothing():
    from safetensors.numpy import load_file

    config = _config()
    assert config["model_type"] == "gpt2" and config["n_layer"] == 2
    size = sum(f.stat().st_size for f in FOLDER.iterdir() if f.is_file())
    assert size <= 2 * 1024 * 1024
    tensors = {
        k.removeprefix("transformer."): v
        for k, v in load_file(str(FOLDER / "model.safetensors")).items()
    }
    for layer in range(config["n_layer"]):
        for part in ("c_proj.weight", "c_proj.bias"):
            assert not tensors[f"h.{layer}.mlp.{part}"].any()  # the MLP's output is exactly 0


def test_the_tokenizer_reads_one_word_as_one_token():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(FOLDER / "tokenizer.json"))
    words = _words()
    encoding = tokenizer.encode(f"{words[0].upper()} {words[1]}  {words[2]}")
    assert encoding.tokens == words[:3] and encoding.ids == [0, 1, 2]


@pytest.fixture(scope="module")
def torch_runs():
    """transformers' GPT2LMHeadModel on the fresh sequences: {knockout: (logits [B, T, V],
    attentions [B, layers, heads, T, T])} for no knockout and each of the two heads."""
    import torch
    from transformers import GPT2LMHeadModel

    model = GPT2LMHeadModel.from_pretrained(FOLDER, attn_implementation="eager").eval()
    d_head = model.config.n_embd // model.config.n_head
    ids = torch.from_numpy(fresh_sequences()[0])
    runs = {}
    for knockout in (None, INDUCTION_HEAD, PREVIOUS_TOKEN_HEAD):
        state = {k: v.clone() for k, v in model.state_dict().items()}
        if knockout is not None:
            layer, head = knockout
            with torch.no_grad():  # c_proj is a Conv1D, weight [in, out]: a head's rows = W_O
                weight = model.transformer.h[layer].attn.c_proj.weight
                weight[head * d_head : (head + 1) * d_head] = 0
        with torch.no_grad():
            out = model(ids, output_attentions=True)
        attentions = torch.stack(out.attentions, 1).numpy()  # [B, layers, heads, T, T]
        runs[knockout] = (out.logits.numpy(), attentions)
        model.load_state_dict(state)
    return runs


@needs_torch
def test_transformers_copies_the_repeated_half_and_knockouts_break_it(torch_runs):
    ids, mask = fresh_sequences()
    assert copy_accuracy(torch_runs[None][0], ids, mask) >= 0.9
    for head in (INDUCTION_HEAD, PREVIOUS_TOKEN_HEAD):
        assert copy_accuracy(torch_runs[head][0], ids, mask) <= 0.5, head


@needs_torch
def test_the_two_heads_have_their_signatures(torch_runs):
    ids, mask = fresh_sequences()
    attentions = torch_runs[None][1]
    previous, _ = head_scores(
        attentions[:, PREVIOUS_TOKEN_HEAD[0], PREVIOUS_TOKEN_HEAD[1]], ids, mask
    )
    _, induction = head_scores(attentions[:, INDUCTION_HEAD[0], INDUCTION_HEAD[1]], ids, mask)
    assert previous > 0.5
    assert induction > 0.5


def _app_run(knockout=None):
    """The app's own model run on each fresh sequence: logits [B, T, V], attentions [B, ...]."""
    model_run = getattr(ae, "model_run", None)
    if model_run is None:
        pytest.skip("attention_explorer.model_run is not on this branch yet")
    words = _words()
    ids, mask = fresh_sequences(count=24)
    runs = [
        model_run(str(FOLDER), " ".join(words[i] for i in row), knockout=knockout) for row in ids
    ]
    assert all(list(run.ids) == list(row) for run, row in zip(runs, ids))
    logits = np.stack([np.asarray(run.logits) for run in runs])  # [B, T, V]
    attentions = np.stack([np.asarray(run.attentions) for run in runs])  # [B, L, H, T, T]
    return logits, attentions, ids, mask


def test_the_app_copies_and_knocking_out_either_head_breaks_it():
    logits, attentions, ids, mask = _app_run()
    assert copy_accuracy(logits, ids, mask) >= 0.9
    layer, head = INDUCTION_HEAD
    assert head_scores(attentions[:, layer, head], ids, mask)[1] > 0.5
    for knocked in (INDUCTION_HEAD, PREVIOUS_TOKEN_HEAD):
        assert copy_accuracy(_app_run(knockout=[knocked])[0], ids, mask) <= 0.5, knocked
