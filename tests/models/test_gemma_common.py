"""What the family tests of Gemma, Gemma 2, Gemma 3, OLMo 2, SmolLM3 and Qwen2's sliding
windows share: a tiny random checkpoint written by transformers, the exact float64 reference
(:mod:`tests.models.exact_reference`), and the checks every family runs against it: the
model run (numpy and torch), a knockout and an edit, each against transformers run on a
checkpoint changed the same way (a knocked-out head is its ``o_proj`` columns zeroed; an edit
that doubles a key/value head's V is its ``v_proj`` rows doubled), and a layer opened by
``from_model`` reproducing the model run's attention. The tests here check the helpers
themselves on Gemma.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.pretrained import from_model, model_attention, model_run
from tests.models.conftest import bpe_tokenizer, rewrite_config  # noqa: F401 (re-exported)
from tests.models.exact_reference import run_reference

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEXT = "The cat sat on the mat because it was tired and the dog watched it."
TOL = 1e-6
BACKENDS = ["numpy", "torch"] + (["torch:cuda"] if torch.cuda.is_available() else [])

#: The tiny shapes every family test uses (head_dim 12: not hidden / heads = 8).
SIZES = dict(
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=12,
    max_position_embeddings=64,
    rms_norm_eps=1e-5,
    rope_theta=500.0,
    tie_word_embeddings=False,
)


def write_model(folder: Path, config_class: str, model_class: str, **extra) -> Path:
    """A random checkpoint of ``model_class`` in ``folder`` (the BPE tokenizer beside it):
    matrices scaled up and every 1-D weight (norms, biases) moved off its initial value, so
    that attention is far from uniform and every norm matters."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = bpe_tokenizer(folder)
    torch.manual_seed(0)
    config = getattr(transformers, config_class)(**{**SIZES, "vocab_size": vocab, **extra})
    model = getattr(transformers, model_class)(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0) if p.dim() == 2 else p.add_(0.3 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def rewrite_tensors(folder: Path, change) -> None:
    """Apply ``change(tensors)`` to the checkpoint's tensors (a dict of numpy arrays)."""
    from safetensors.numpy import load_file, save_file

    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    change(tensors)
    save_file(tensors, str(path), metadata={"format": "pt"})


def worst(run, reference) -> float:
    """The largest absolute difference of attentions, hidden states and logits."""
    return max(
        float(np.abs(getattr(run, name) - getattr(reference, name)).max())
        for name in ("attentions", "hidden", "logits")
    )


def check_parity(folder: Path, backend: str) -> float:
    """model_run (float64) and model_attention against the exact reference; the worst
    difference, after asserting it is within 1e-6 and that attention is far from uniform."""
    run = model_run(folder, TEXT, dtype="float64", backend=backend)
    reference = run_reference(folder, list(run.ids))
    difference = worst(run, reference)
    assert difference <= TOL, difference
    assert run.attentions[..., 1:, :].max() > 0.5  # rows far from uniform
    attentions, _ = model_attention(folder, TEXT, backend=backend)
    assert np.abs(attentions - reference.attentions).max() <= TOL
    return difference


def check_knockout(folder: Path, tmp: Path, layer: int, head: int, backend: str) -> float:
    """A knocked-out head against transformers with that head's o_proj columns zeroed."""
    d_k = json.loads((folder / "config.json").read_text()).get("head_dim") or 8
    changed = tmp / "knocked"
    shutil.copytree(folder, changed)
    name = f"model.layers.{layer}.self_attn.o_proj.weight"
    rewrite_tensors(
        changed, lambda t: t[name].__setitem__((..., slice(head * d_k, (head + 1) * d_k)), 0)
    )
    run = model_run(folder, TEXT, dtype="float64", backend=backend, knockout=[(layer, head)])
    base = model_run(folder, TEXT, dtype="float64", backend=backend)
    assert np.abs(run.logits - base.logits).max() > 1e-3  # the head mattered
    difference = worst(run, run_reference(changed, list(run.ids)))
    assert difference <= TOL, difference
    return difference


def doubled_value_head(session, d_v: int):
    """The session with key/value head 0's values doubled (W_V's columns in projection
    mode, V in direct mode)."""
    inputs = session.inputs
    if inputs.V is not None:
        V = np.array(inputs.V, dtype=np.float64)  # [kv, n, d_v]
        V[0] *= 2.0
        return replace(session, inputs=replace(inputs, V=V))
    W_V = np.array(inputs.W_V, dtype=np.float64)  # [d, kv*d_v]
    W_V[:, :d_v] *= 2.0
    b_V = None if inputs.b_V is None else np.array(inputs.b_V, dtype=np.float64)
    if b_V is not None:
        b_V[:d_v] *= 2.0
    return replace(session, inputs=replace(inputs, W_V=W_V, b_V=b_V))


def check_session_and_edit(folder: Path, tmp: Path, layer: int, backend: str) -> float:
    """``from_model`` reproduces layer ``layer``; an edit doubling key/value head 0's values
    matches transformers with that head's v_proj rows (and bias) doubled."""
    run = model_run(folder, TEXT, dtype="float64")
    session = from_model(folder, TEXT, layer=layer)
    trace = compute(session.inputs, session.config, dtype="float64")
    assert np.abs(trace.stages["weights"] - run.attentions[layer]).max() < 1e-12
    same = model_run(folder, TEXT, dtype="float64", backend=backend, edits={layer: session})
    assert np.abs(same.logits - run.logits).max() < 1e-9
    d_v = session.config.d_v or session.config.d_k
    edited = doubled_value_head(session, d_v)
    moved = model_run(folder, TEXT, dtype="float64", backend=backend, edits={layer: edited})
    assert np.abs(moved.logits - run.logits).max() > 1e-3
    changed = tmp / "edited"
    shutil.copytree(folder, changed)
    prefix = f"model.layers.{layer}.self_attn.v_proj."

    def double(tensors):
        for name in (prefix + "weight", prefix + "bias"):
            if name in tensors:
                tensors[name][:d_v] *= 2.0

    rewrite_tensors(changed, double)
    difference = worst(moved, run_reference(changed, list(moved.ids)))
    assert difference <= TOL, difference
    return difference


# ------------------------------------------------------------------- the helpers, on Gemma


@pytest.fixture(scope="module")
def gemma_folder(tmp_path_factory):
    """One random Gemma checkpoint."""
    return write_model(tmp_path_factory.mktemp("gemma"), "GemmaConfig", "GemmaForCausalLM")


def test_a_changed_checkpoint_changes_the_reference(gemma_folder, tmp_path):
    """The knockout and edit references are not vacuous: zeroing o_proj columns moves
    transformers' logits."""
    ids = list(model_run(gemma_folder, TEXT, dtype="float64").ids)
    base = run_reference(gemma_folder, ids)
    changed = tmp_path / "changed"
    shutil.copytree(gemma_folder, changed)
    name = "model.layers.0.self_attn.o_proj.weight"
    rewrite_tensors(changed, lambda t: t[name].__setitem__((..., slice(0, 12)), 0))
    assert np.abs(run_reference(changed, ids).logits - base.logits).max() > 1e-3
