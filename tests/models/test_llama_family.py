"""Llama, Qwen2 and Mistral against transformers (eager, float64) on tiny random checkpoints
written on the fly: attentions, hidden states and logits within 1e-6 (transformers' eager
softmax runs in float32), through ``ae.model_run`` and through ``from_model`` sessions."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.pretrained import ModelError, from_model, model_run
from tests.models.conftest import bpe_tokenizer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEXT = "The cat sat on the mat because it was tired and the dog watched it."
TOL = 1e-6


def _config(family: str, vocab: int, **extra):
    sizes = dict(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rms_norm_eps=1e-5,
        rope_theta=500.0,
        tie_word_embeddings=False,
    )
    sizes.update(extra)
    cls = {
        "llama": transformers.LlamaConfig,
        "qwen2": transformers.Qwen2Config,
        "mistral": transformers.MistralConfig,
    }[family]
    return cls(**sizes)


def _model_class(family: str):
    return {
        "llama": transformers.LlamaForCausalLM,
        "qwen2": transformers.Qwen2ForCausalLM,
        "mistral": transformers.MistralForCausalLM,
    }[family]


def make_checkpoint(folder, family: str, dtype=None, shard: str | None = None, **extra):
    """A random 2-layer checkpoint of ``family`` in ``folder`` with a byte-level BPE
    tokenizer; weights scaled up so attention is far from uniform. Returns the model."""
    vocab = bpe_tokenizer(folder)
    torch.manual_seed(0)
    config = _config(family, vocab, **extra)
    config._attn_implementation = "eager"
    model = _model_class(family)(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0) if p.dim() == 2 else p.add_(0.2 * torch.randn_like(p))
    if dtype is not None:
        model = model.to(dtype)
    kwargs = {"max_shard_size": shard} if shard else {}
    model.save_pretrained(folder, safe_serialization=True, **kwargs)
    return model


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    """One random Llama checkpoint (GQA 4/2) for the tests that only read it."""
    folder = tmp_path_factory.mktemp("llama")
    make_checkpoint(folder, "llama")
    return folder


@pytest.fixture
def llama_copy(llama_folder, tmp_path):
    """A copy of the Llama checkpoint a test may change."""
    folder = tmp_path / "llama"
    shutil.copytree(llama_folder, folder)
    return folder


def reference(folder, family: str, ids):
    """transformers' eager run of the saved checkpoint, loaded in float64 (bf16 weights are
    upcast; the rotary frequencies are computed afresh): attentions [L, h, n, n], hidden
    [L+1, n, d], logits [n, vocab]."""
    model = (
        _model_class(family)
        .from_pretrained(folder, dtype=torch.float64, attn_implementation="eager")
        .eval()
    )
    with torch.no_grad():
        out = model(
            torch.tensor([ids]), output_attentions=True, output_hidden_states=True, use_cache=False
        )
    attentions = np.stack([a[0].numpy() for a in out.attentions])  # [L, h, n, n]
    hidden = np.stack([h[0].numpy() for h in out.hidden_states])  # [L+1, n, d]
    return attentions, hidden, out.logits[0].numpy()


def assert_parity(folder, family: str, backend: str = "numpy"):
    """The model run matches transformers; returns the run and the largest difference."""
    run = model_run(folder, TEXT, dtype="float64", backend=backend)
    attentions, hidden, logits = reference(folder, family, list(run.ids))
    worst = 0.0
    for ours, theirs in ((run.attentions, attentions), (run.logits, logits)):
        assert ours.shape == theirs.shape
        worst = max(worst, float(np.abs(ours - theirs).max()))
    # transformers' last hidden state is after the final norm; ours is before it
    assert run.hidden.shape == hidden.shape
    worst = max(worst, float(np.abs(run.hidden[:-1] - hidden[:-1]).max()))
    assert worst <= TOL, worst
    return run, worst


@pytest.mark.parametrize(
    ("family", "extra"),
    [
        ("llama", {}),
        ("llama", {"head_dim": 16, "tie_word_embeddings": True}),
        ("qwen2", {}),
        ("mistral", {"sliding_window": 5}),
        (
            "llama",
            {
                "rope_scaling": {
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 16,
                }
            },
        ),
        ("llama", {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}),
    ],
    ids=["llama-gqa", "llama-head-dim-tied", "qwen2", "mistral-window", "llama3-rope", "linear"],
)
@pytest.mark.parametrize(
    "backend", ["numpy", "torch"] + (["torch:cuda"] if torch.cuda.is_available() else [])
)
def test_family_matches_transformers(tmp_path, family, extra, backend):
    make_checkpoint(tmp_path, family, **extra)
    run, worst = assert_parity(tmp_path, family, backend)
    print(f"parity {family} {sorted(extra)} on {backend}: {worst:.2e}")
    assert len(run.ids) > 12  # longer than the sliding window of 5
    if family == "mistral":  # the window hides keys 5 or more positions back
        assert run.attentions[0, 0, 10, :6].max() == 0.0 and run.attentions[0, 0, 10, 6] > 0
    if family == "qwen2":
        assert "q_proj.bias" in " ".join(_keys(tmp_path))


def _keys(folder):
    from safetensors import safe_open

    keys = []
    for path in sorted(folder.glob("*.safetensors")):
        with safe_open(str(path), "np") as f:
            keys += list(f.keys())
    return keys


def test_bf16_sharded_checkpoint_matches_the_rounded_weights(tmp_path):
    make_checkpoint(tmp_path, "qwen2", dtype=torch.bfloat16, shard="20KB")
    assert (tmp_path / "model.safetensors.index.json").exists()
    assert len(list(tmp_path.glob("model-*-of-*.safetensors"))) > 1
    # transformers on the same bf16-rounded weights, upcast to float64
    _, worst = assert_parity(tmp_path, "qwen2")
    print(f"parity qwen2 bf16 sharded: {worst:.2e}")


def test_session_of_a_rotary_layer_reproduces_the_run(tmp_path):
    make_checkpoint(tmp_path, "mistral", sliding_window=4)
    run = model_run(tmp_path, TEXT, dtype="float64")
    session = from_model(tmp_path, TEXT, layer=1)
    assert session.config.mode == "projection" and session.config.mask == "causal"
    assert session.config.window == 4  # Mistral's sliding window is the session's window
    assert session.config.positional == "rope" and session.config.rope_theta == 500.0
    trace = compute(session.inputs, session.config, dtype="float64")
    assert np.abs(trace.stages["weights"] - run.attentions[1]).max() < 1e-12


def test_knockout_and_edit_move_the_prediction(llama_folder):
    tmp_path = llama_folder
    base = model_run(tmp_path, TEXT, dtype="float64")
    knocked = model_run(tmp_path, TEXT, dtype="float64", knockout=[(0, 1)])
    assert np.array_equal(knocked.attentions[0], base.attentions[0])
    assert np.abs(knocked.logits - base.logits).max() > 1e-3
    session = from_model(tmp_path, TEXT, layer=0)
    same = model_run(tmp_path, TEXT, dtype="float64", edits={0: session})
    assert np.abs(same.logits - base.logits).max() < 1e-9
    W_K = np.array(session.inputs.W_K, dtype=np.float64)  # [d_model, kv_heads * d_k]
    W_K[:, :8] *= 5.0  # the keys of kv head 0 (d_k 8)
    edited = replace(session, inputs=replace(session.inputs, W_K=W_K))
    moved = model_run(tmp_path, TEXT, dtype="float64", edits={0: edited})
    assert np.abs(moved.attentions[0] - base.attentions[0]).max() > 1e-3
    assert np.abs(moved.attentions[1] - base.attentions[1]).max() > 1e-6


def _rewrite_config(folder, **changes):
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))


@pytest.mark.parametrize(
    ("family", "changes", "named"),
    [
        ("llama", {"rope_scaling": {"rope_type": "proportional", "factor": 4.0}}, "proportional"),
        (
            "llama",
            {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "low_freq_factor": 1.0}},
            "low_freq_factor",
        ),
        ("llama", {"hidden_act": "relu2"}, "hidden_act"),
        ("qwen2", {"use_sliding_window": "yes"}, "use_sliding_window"),
        ("qwen2", {"layer_types": ["sliding_attention", "full_attention"]}, "sliding_attention"),
    ],
)
def test_config_keys_not_implemented_are_refused_by_name(
    tmp_path, llama_copy, family, changes, named
):
    if family == "llama":
        tmp_path = llama_copy
    else:
        make_checkpoint(tmp_path, family)
    _rewrite_config(tmp_path, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(tmp_path, TEXT)


@pytest.mark.parametrize(
    ("changes", "tensor", "expected", "found"),
    [
        ({"num_key_value_heads": 4}, "layers.0.self_attn.k_proj.weight", "[32, 32]", "[16, 32]"),
        ({"intermediate_size": 40}, "layers.0.mlp.up_proj.weight", "[40, 32]", "[48, 32]"),
        ({"head_dim": 4}, "layers.0.self_attn.o_proj.weight", "[32, 16]", "[32, 32]"),
    ],
)
def test_a_tensor_not_matching_the_config_is_named(llama_copy, changes, tensor, expected, found):
    _rewrite_config(llama_copy, **changes)
    with pytest.raises(ModelError) as err:
        model_run(llama_copy, TEXT)
    message = str(err.value)
    assert tensor in message and expected in message and found in message, message


def test_an_unsupported_family_names_the_supported_ones(llama_copy):
    tmp_path = llama_copy
    _rewrite_config(tmp_path, model_type="mamba", architectures=["MambaForCausalLM"])
    with pytest.raises(ModelError) as err:
        model_run(tmp_path, TEXT)
    message = str(err.value)
    assert "MambaForCausalLM" in message
    for label in ("Llama", "Qwen2", "Mistral", "GPT-2", "BERT"):
        assert label in message, message
