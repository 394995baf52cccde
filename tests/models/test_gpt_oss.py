"""gpt-oss against transformers' ``GptOssForCausalLM`` (eager, float64, its float32 RMSNorm and
RoPE made float64; the plain expert loop) on tiny random checkpoints written on the fly:
attention sinks (each head's learned logit in its softmax's denominator), alternating sliding
and full layers, YaRN RoPE with ``truncate: false``, biases on q/k/v/o and the experts.
Attentions, hidden states and logits within 1e-6 through ``ae.model_run`` on numpy and torch,
with mild and sharp query/key weights; a knockout, an edit of W_O and an edit of the sink
logits; every layer opens with ``from_model`` as a projection session whose ``sink_weight``
stage takes what the weights leave; what gpt-oss support does not implement is refused by
name."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.pretrained import ModelError, model_run
from tests.models.conftest import (
    assert_like_reference,
    bpe_tokenizer,
    check_knockout_and_edit,
    layer_session,
    rewrite_config,
    sharp_copy,
)
from tests.models.exact_reference import (
    exact_float64,
    forward_reference,
    load_float64,
    run_reference,
)

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEXT = "The cat sat on the mat because it was tired and the dog watched it."
TOL = 1e-6
BACKENDS = ["numpy", "torch"] + (["torch:cuda"] if torch.cuda.is_available() else [])
D_K = 16

#: A tiny gpt-oss: 2 layers (sliding, full), d 48, 4 heads sharing 2 key/value heads of 16,
#: 4 experts (2 a token), a window of 6, YaRN x4 over a 64-token original context.
SIZES = dict(
    hidden_size=48,
    intermediate_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=D_K,
    num_local_experts=4,
    num_experts_per_tok=2,
    sliding_window=6,
    max_position_embeddings=256,
    rms_norm_eps=1e-5,
    rope_parameters={
        "rope_type": "yarn",
        "factor": 4.0,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "truncate": False,
        "original_max_position_embeddings": 64,
        "rope_theta": 500.0,
    },
)


def make_gpt_oss(folder, **extra):
    """A random tiny gpt-oss (:data:`SIZES` and ``extra``) saved in ``folder`` with the shared
    BPE tokenizer; weights N(0, 0.3), norm weights off 1, sink logits N(0, 1) so that each
    head's sink takes a visible share of its rows."""
    vocab = bpe_tokenizer(folder)
    torch.manual_seed(0)
    config = transformers.GptOssConfig(**{"vocab_size": vocab, **SIZES, **extra})
    model = transformers.GptOssForCausalLM(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("sinks"):
                p.copy_(torch.randn_like(p))
            elif p.dim() >= 2 or name.endswith("bias"):
                p.normal_(0.0, 0.3)
            else:
                p.add_(0.5 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="module")
def oss_folder(tmp_path_factory):
    """One random gpt-oss checkpoint for the tests that only read it."""
    return make_gpt_oss(tmp_path_factory.mktemp("gpt-oss"))


@pytest.fixture(scope="module")
def sharp_folder(oss_folder, tmp_path_factory):
    """The same checkpoint with q and k scaled so layer 0's rows peak near 0.6."""
    return sharp_copy(oss_folder, tmp_path_factory.mktemp("gpt-oss-sharp"), TEXT)


@pytest.fixture
def oss_copy(oss_folder, tmp_path):
    """A copy of the checkpoint a test may change."""
    folder = tmp_path / "gpt-oss"
    shutil.copytree(oss_folder, folder)
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("weights", ["mild", "sharp"])
def test_gpt_oss_matches_transformers(oss_folder, sharp_folder, weights, backend):
    folder = oss_folder if weights == "mild" else sharp_folder
    run = model_run(folder, TEXT, dtype="float64", backend=backend)
    ref = run_reference(folder, list(run.ids))
    assert ref.calls["rms_norm"] and ref.calls["rotary"] and ref.calls["softmax"]
    worst = assert_like_reference(run, ref, TOL)
    print(f"parity gpt_oss {weights} on {backend}: {worst:.2e}")
    sums = run.attentions.sum(axis=-1)  # [L, h, n]: 1 - the sink's share, below 1
    assert sums.max() < 1 and sums.min() > 0 and sums.mean() < 0.99
    if weights == "sharp":
        assert run.attentions[0, :, 1:].max(axis=-1).mean() > 0.4


def test_the_sinks_change_the_numbers(oss_copy):
    """The parity is not vacuous: without the sinks (a very negative logit) every row sums
    to 1 and transformers' run moves with the file."""
    from safetensors.numpy import load_file, save_file

    path = oss_copy / "model.safetensors"
    before = model_run(oss_copy, TEXT, dtype="float64")
    tensors = load_file(path)
    for layer in range(2):
        tensors[f"model.layers.{layer}.self_attn.sinks"][:] = -1e4
    save_file(tensors, path, metadata={"format": "pt"})
    after = model_run(oss_copy, TEXT, dtype="float64")
    np.testing.assert_allclose(after.attentions.sum(axis=-1), 1.0, atol=1e-12)
    assert np.abs(after.logits - before.logits).max() > 1e-2
    assert_like_reference(after, run_reference(oss_copy, list(after.ids)), TOL)


def test_sliding_and_full_layers(oss_folder):
    """Layer 0 slides (query i sees keys i-5..i), layer 1 sees every earlier key."""
    run = model_run(oss_folder, TEXT, dtype="float64")
    n = run.attentions.shape[-1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    far = (i - j >= 6) & (j <= i)
    assert np.all(run.attentions[0][:, far] == 0.0)
    assert np.all(run.attentions[1][:, far] > 0.0)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_knockout_and_edit(oss_folder, backend):
    check_knockout_and_edit(
        oss_folder, TEXT, "model.layers.0.self_attn.o_proj.weight", D_K, backend=backend
    )


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_an_edit_of_the_sink_logits(oss_folder, backend):
    """Layer 0's session with head 2's sink logit raised by 3 gives transformers' run with
    ``self_attn.sinks[2]`` raised by 3 (and the output moves)."""
    ids = list(model_run(oss_folder, TEXT, dtype="float64").ids)
    session = layer_session(oss_folder, TEXT, 0)
    sinks = np.array(session.inputs.sinks, dtype=np.float64)  # [heads]
    sinks[2] += 3.0
    edited = replace(session, inputs=session.inputs.with_changes(sinks=sinks))
    run = model_run(oss_folder, TEXT, dtype="float64", edits={0: edited}, backend=backend)
    model = load_float64(oss_folder)
    with torch.no_grad():
        model.model.layers[0].self_attn.sinks[2] += 3.0
    with exact_float64():
        reference = forward_reference(model, ids)
    assert_like_reference(run, reference, TOL)
    base = model_run(oss_folder, TEXT, dtype="float64", backend=backend)
    assert np.abs(run.attentions[0, 2] - base.attentions[0, 2]).max() > 1e-3


@pytest.mark.parametrize("layer", [0, 1])
def test_each_layer_opens_as_a_projection_session_that_reproduces_it(oss_folder, layer):
    run = model_run(oss_folder, TEXT, dtype="float64")
    session = ae.from_model(oss_folder, TEXT, layer=layer)
    config = session.config
    assert config.mode == "projection" and config.attention_sinks
    assert config.positional == "rope" and config.rope_scaling == "yarn"
    assert config.window == (6 if layer == 0 else None)
    assert dict(config.rope_parameters)["truncate"] is False
    trace = ae.compute(session, dtype="float64")
    np.testing.assert_allclose(trace["weights"], run.attentions[layer], atol=1e-10, rtol=0)
    total = trace["weights"].sum(axis=-1) + trace["sink_weight"][..., 0]  # [h, n]
    np.testing.assert_allclose(total, 1.0, atol=1e-12)
    assert trace["sink_weight"].min() > 0
    for backend in ("torch",):
        other = ae.compute(session, dtype="float64", backend=backend)
        np.testing.assert_allclose(other["weights"], trace["weights"], atol=1e-12, rtol=0)


@pytest.mark.parametrize("written", ["absent", "legacy"])
def test_rope_as_config_json_may_write_it(oss_copy, written):
    """Without any rope dict or rope_theta the run is GptOssConfig's defaults (yarn x32 over
    4096, truncate false, base 150000), as transformers fills them; OpenAI's own config.json
    layout (``rope_scaling`` with a top-level ``rope_theta``, and keys transformers ignores)
    reads the same as ``rope_parameters``."""
    config = json.loads((oss_copy / "config.json").read_text())
    rope = dict(config["rope_parameters"])
    if written == "absent":
        rewrite_config(oss_copy, rope_parameters=None, rope_scaling=None, rope_theta=None)
    else:
        theta = rope.pop("rope_theta")
        rewrite_config(
            oss_copy,
            rope_parameters=None,
            rope_scaling=rope,
            rope_theta=theta,
            experts_per_token=2,
            initial_context_length=64,
        )
    run = model_run(oss_copy, TEXT, dtype="float64")
    assert_like_reference(run, run_reference(oss_copy, list(run.ids)), TOL)
    session = ae.from_model(oss_copy, TEXT, layer=1)
    expected = (150000.0, 32.0) if written == "absent" else (500.0, 4.0)
    assert (session.config.rope_theta, session.config.rope_factor) == expected


def _sinks_changed(folder, shape=None):
    """Layer 1's sinks removed from the file (``shape`` None) or given another shape."""
    from safetensors.numpy import load_file, save_file

    path = folder / "model.safetensors"
    tensors = load_file(path)
    if shape is None:
        del tensors["model.layers.1.self_attn.sinks"]
    else:
        tensors["model.layers.1.self_attn.sinks"] = np.zeros(shape, np.float32)
    save_file(tensors, path, metadata={"format": "pt"})


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (dict(quantization_config={"quant_method": "mxfp4"}), "quantization_config"),
        (dict(layer_types=["sliding_attention", "chunked_attention"]), "chunked_attention"),
        (dict(sliding_window=None, null=("sliding_window",)), "sliding_window"),
        (dict(attention_bias=False), "attention_bias"),
        ("no sinks", "layers.1.self_attn.sinks"),
        ("3 sinks", "sinks has shape [3], expected [4]"),
        ("as llama", "gpt_oss"),
    ],
    ids=["quantized", "layer type", "no window", "bias", "no sinks", "3 sinks", "relabelled"],
)
def test_what_is_not_implemented_is_refused_by_name(oss_copy, change, words):
    if change in ("no sinks", "3 sinks"):
        _sinks_changed(oss_copy, None if change == "no sinks" else (3,))
    elif change == "as llama":  # gpt-oss attention weights under a Llama label
        rewrite_config(oss_copy, model_type="llama", architectures=["LlamaForCausalLM"])
    else:
        rewrite_config(oss_copy, **change)
    with pytest.raises(ModelError) as caught:
        model_run(oss_copy, TEXT, dtype="float64")
    message = str(caught.value)
    assert words in message and "\n" not in message


def test_a_llama_file_holding_sinks_is_refused_naming_them(tmp_path):
    """Sinks in the file of a family without them (a Llama) are refused by name, not run
    without them."""
    from safetensors.numpy import load_file, save_file

    from tests.models.conftest import random_checkpoint

    folder = random_checkpoint(
        tmp_path,
        "LlamaConfig",
        "LlamaForCausalLM",
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    model_run(folder, TEXT, dtype="float64")  # runs as it is
    path = folder / "model.safetensors"
    tensors = load_file(path)
    tensors["model.layers.1.self_attn.sinks"] = np.zeros(4, np.float32)
    save_file(tensors, path, metadata={"format": "pt"})
    with pytest.raises(ModelError, match=r"layers\.1\.self_attn\.sinks is present.*no attention"):
        model_run(folder, TEXT, dtype="float64")


def test_the_record_reads_the_sinks_as_a_tensor_role(oss_folder):
    from attention_explorer.pretrained.architecture import TENSOR_ROLES
    from attention_explorer.pretrained.families import FAMILIES
    from attention_explorer.pretrained.open_model import load_model

    arch = FAMILIES["gpt_oss"]
    assert "sinks" in TENSOR_ROLES and arch.attention_sinks
    config = json.loads((oss_folder / "config.json").read_text())
    assert config["model_type"] in arch.model_types
    w = load_model(oss_folder).weights
    assert w.layers[0].sinks.shape == (4,) and w.window_of(0) == 6 and w.window_of(1) is None


def test_a_layer_with_an_edited_sink_saves_by_reference_and_loads(oss_folder, tmp_path):
    session = ae.from_model(oss_folder, TEXT, layer=1)
    assert "sink logit" in session.description
    sinks = np.array(session.inputs.sinks, dtype=np.float64)  # [heads]
    sinks[1] += 2.0
    edited = replace(session, inputs=session.inputs.with_changes(sinks=sinks))
    path = ae.save(edited, tmp_path / "edited.json")
    saved = json.loads(path.read_text())
    assert "changes" in json.dumps(saved) and "W_Q" not in json.dumps(saved)  # by reference
    back = ae.load(path)
    assert back.config.attention_sinks and np.array_equal(back.inputs.sinks, sinks)
    np.testing.assert_allclose(
        ae.compute(back, dtype="float64")["weights"],
        ae.compute(edited, dtype="float64")["weights"],
        atol=1e-12,
    )
