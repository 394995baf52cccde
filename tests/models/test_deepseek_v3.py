"""DeepSeek-V3 (multi-head latent attention) against transformers' ``DeepseekV3ForCausalLM``
(eager, float64 with its float32 steps patched to float64: ``exact_reference``) on tiny random
checkpoints: attentions, hidden states and logits within 1e-6 on numpy and torch, mild and
sharp weights, with and without a q_lora rank, interleaved or rotate-half RoPE, biases, YaRN's
mscale², a mixture-of-experts layer; a knockout and an edit; a layer opened by ``from_model``
(direct mode) reproduces the layer; the latent stages (``latent_view``) are transformers' own
(hooks on its modules); what is not implemented is refused by name."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.pretrained import ModelError, from_model, model_run
from attention_explorer.pretrained.latent.view import latent_view
from tests.models import exact_reference
from tests.models.conftest import bpe_tokenizer, check_knockout_and_edit, rewrite_config

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEXT = "The cat sat on the mat because it was"
TOL = 1e-6
BACKENDS = ["numpy", "torch"] + (["torch:cuda"] if torch.cuda.is_available() else [])
V_DIM = 12

#: The tiny shape: 2 layers, d 32, 4 heads of nope 8 + rope 8 (values 12), kv_lora 16,
#: q_lora 24, 4 experts; rms_norm_eps 1e-5 (the latent norms keep 1e-6: both are checked).
SIZES = dict(
    hidden_size=32,
    intermediate_size=48,
    moe_intermediate_size=16,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=4,
    n_routed_experts=4,
    n_group=2,
    topk_group=1,
    num_experts_per_tok=2,
    kv_lora_rank=16,
    q_lora_rank=24,
    qk_rope_head_dim=8,
    qk_nope_head_dim=8,
    v_head_dim=V_DIM,
    first_k_dense_replace=2,
    max_position_embeddings=64,
    rms_norm_eps=1e-5,
)
YARN = {
    "rope_scaling": {
        "type": "yarn",
        "factor": 8.0,
        "original_max_position_embeddings": 8,
        "mscale": 1.0,  # cos and sin times mscale(8, 1) / mscale(8, 0.5)
        "mscale_all_dim": 0.5,  # the scores times mscale(8, 0.5)²
        "beta_fast": 16,
        "beta_slow": 2,
    }
}
VARIANTS = {
    "q_lora": {},
    "no-q_lora": {"q_lora_rank": None},
    "rotate-half-bias-tied": {
        "rope_interleave": False,
        "attention_bias": True,
        "tie_word_embeddings": True,
    },
    "yarn-mscale": YARN,
    "experts": {"first_k_dense_replace": 1},
}


def make_deepseek(folder, **extra):
    """A random tiny DeepSeek-V3 (:data:`SIZES` + ``extra``) saved in ``folder``, weights
    scaled as the parity tests do (2-D x4, the rest shifted by 0.2·N(0, 1))."""
    vocab = bpe_tokenizer(folder)
    torch.manual_seed(0)
    config = transformers.DeepseekV3Config(**{"vocab_size": vocab, **SIZES, **extra})
    model = transformers.DeepseekV3ForCausalLM(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0) if p.dim() == 2 else p.add_(0.2 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="module")
def deepseek_folder(tmp_path_factory):
    """The default tiny checkpoint, for the tests that only read it."""
    return make_deepseek(tmp_path_factory.mktemp("deepseek"))


@pytest.fixture
def deepseek_copy(deepseek_folder, tmp_path):
    """A copy a test may change."""
    folder = tmp_path / "deepseek"
    shutil.copytree(deepseek_folder, folder)
    return folder


def _worst(run, reference) -> dict[str, float]:
    """The largest difference of attentions, hidden states and logits."""
    out = {}
    for name in ("attentions", "hidden", "logits"):
        ours, theirs = getattr(run, name), getattr(reference, name)
        assert ours.shape == theirs.shape, name
        out[name] = float(np.abs(ours - theirs).max())
    return out


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """Each variant's checkpoint (mild, or sharp: rows peaking near 0.6) with its exact
    reference, built once."""
    built = {}

    def get(variant: str, weights: str = "mild"):
        if (variant, weights) not in built:
            folder = make_deepseek(tmp_path_factory.mktemp(variant), **VARIANTS[variant])
            ids = list(model_run(folder, TEXT, dtype="float64").ids)
            if weights == "sharp":
                exact_reference.sharpen(folder, ids, 0.6)
            built[variant, weights] = (folder, exact_reference.run_reference(folder, ids))
        return built[variant, weights]

    return get


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("variant", "weights"),
    [(v, "mild") for v in VARIANTS] + [("q_lora", "sharp"), ("yarn-mscale", "sharp")],
)
def test_deepseek_v3_matches_the_exact_reference(checkpoints, variant, weights, backend):
    folder, reference = checkpoints(variant, weights)
    run = model_run(folder, TEXT, dtype="float64", backend=backend)
    worst = _worst(run, reference)
    peak = exact_reference.mean_row_max(reference.attentions[0])
    print(f"parity deepseek_v3 {variant} {weights} {backend}: {worst} (peak {peak:.2f})")
    assert max(worst.values()) <= TOL, worst
    assert reference.calls["rms_norm"] > 0 and reference.calls["softmax"] == 2
    if variant == "experts":  # layer 1's router ran in float64 too
        assert reference.calls["router"] == 1
    if weights == "sharp":
        assert abs(peak - 0.6) < 0.02, peak
    assert np.abs(run.logits).max() < 100 and np.isfinite(run.hidden).all()


def test_the_score_factor_under_yarn_and_the_latent_norms_epsilon(checkpoints):
    """The parity above is not vacuous: the score factor under YaRN is mscale² / sqrt(d_k),
    not 1/sqrt(d_k), and the latent norms keep 1e-6 while the model's norms take 1e-5."""
    from attention_explorer.pretrained.open_model import load_model

    folder, _ = checkpoints("yarn-mscale")
    w = load_model(folder).weights
    assert w.latent.qk_dim == 16 and w.d_k == 16 and w.latent.eps == 1e-6 and w.eps == 1e-5
    m = 0.1 * 0.5 * np.log(8.0) + 1.0
    assert w.scales[0] == pytest.approx(m * m / 4.0, rel=1e-15)
    assert w.rotary.factor == pytest.approx((0.1 * np.log(8.0) + 1.0) / m, rel=1e-15)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_knockout_and_an_edit_match_transformers(deepseek_folder, backend):
    o_proj = "model.layers.0.self_attn.o_proj.weight"
    check_knockout_and_edit(deepseek_folder, TEXT, o_proj, V_DIM, backend=backend)


@pytest.mark.parametrize("layer", [0, 1])
def test_from_model_opens_a_latent_layer_that_reproduces_it(deepseek_folder, layer):
    session = from_model(deepseek_folder, TEXT, layer=layer)
    config, inputs = session.config, session.inputs
    n = len(session.tokens)
    assert config.mode == "direct" and config.d_k == 16 and config.d_v == V_DIM
    assert np.shape(inputs.Q) == (4, n, 16) and np.shape(inputs.K) == (4, n, 16)
    assert np.shape(inputs.V) == (4, n, V_DIM) and np.shape(inputs.W_O) == (4 * V_DIM, 32)
    assert (config.scale, config.scale_factor) == ("sqrt_dk", 1.0)  # 1/sqrt(nope + rope)
    trace = compute(inputs, config, dtype="float64")
    run = model_run(deepseek_folder, TEXT, dtype="float64")
    assert np.abs(trace.stages["weights"] - run.attentions[layer]).max() < 1e-12
    same = model_run(deepseek_folder, TEXT, dtype="float64", edits={layer: session})
    assert np.abs(same.logits - run.logits).max() < 1e-9


def _transformers_stages(folder, ids, layer):
    """transformers' own latent (kv_a_layernorm's output), the rotated shared key and the
    up-projected keys/values of ``layer``, caught by hooks: [n, kv_lora], [n, rope],
    [h, n, nope + rope], [h, n, v]."""
    model = exact_reference.load_float64(folder)
    attn = model.model.layers[layer].self_attn
    seen = {}
    hooks = [
        attn.kv_a_layernorm.register_forward_hook(lambda m, a, out: seen.update(latent=out)),
    ]
    original = attn.expand_kv

    def expand(kv_nope, k_rot):
        seen["rope_key"] = k_rot
        keys, values = original(kv_nope, k_rot)
        seen.update(keys=keys, values=values)
        return keys, values

    attn.expand_kv = expand
    try:
        with exact_reference.exact_float64(), torch.no_grad():
            model(input_ids=torch.tensor([ids]))
    finally:
        for hook in hooks:
            hook.remove()
    return {name: value.detach().numpy().reshape(value.shape[-3:]) for name, value in seen.items()}


def test_latent_view_shows_transformers_own_stages(deepseek_folder):
    ids = list(model_run(deepseek_folder, TEXT, dtype="float64").ids)
    view = latent_view(deepseek_folder, TEXT, layer=1)
    theirs = _transformers_stages(deepseek_folder, ids, 1)
    n = len(ids)
    assert view.c_kv.shape == (n, 16) and view.k_pe.shape == (n, 8) and view.c_q.shape == (n, 24)
    assert np.abs(view.c_kv - theirs["latent"][0]).max() < 1e-12
    assert np.abs(view.k_pe - theirs["rope_key"][0]).max() < 1e-12
    assert np.abs(view.key - theirs["keys"]).max() < 1e-12
    assert np.abs(view.value - theirs["values"]).max() < 1e-12
    assert np.array_equal(view.key[0, :, 8:], view.key[3, :, 8:])  # one rotary key for all heads
    assert np.array_equal(view.key[:, :, :8], view.k_nope)
    session = from_model(deepseek_folder, TEXT, layer=1)
    assert np.array_equal(session.inputs.K, view.key)
    assert np.array_equal(session.inputs.Q, view.query)
    assert (view.cached_bytes, view.full_bytes) == ((16 + 8) * 8, 4 * (16 + 12) * 8)
    with pytest.raises(ModelError, match="out of range"):
        latent_view(deepseek_folder, TEXT, layer=2)


def _rewrite_tensors(folder, change):
    from safetensors.numpy import load_file, save_file

    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    change(tensors)
    save_file(tensors, str(path), metadata={"format": "pt"})


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"num_key_value_heads": 2}, "num_key_value_heads"),
        ({"rope_interleave": "yes"}, "rope_interleave"),
        ({"quantization_config": {"quant_method": "fp8"}}, "quantization_config"),
        ({"q_lora_rank": 0}, "q_lora_rank"),
        ({"qk_rope_head_dim": 7}, "qk_rope_head_dim 7"),
        ({"rope_scaling": {"type": "yarn", "mscale_all_dim": 1.0}}, "mscale_all_dim"),
        ({"rope_parameters": {"rope_type": "proportional", "factor": 2.0}}, "proportional"),
        ({"hidden_act": "relu2"}, "hidden_act"),
        ({"kv_lora_rank": 12}, r"kv_a_proj_with_mqa\.weight has shape"),
    ],
)
def test_config_keys_not_implemented_are_refused_by_name(deepseek_copy, changes, named):
    rewrite_config(deepseek_copy, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(deepseek_copy, TEXT)


def test_a_null_rope_interleave_is_refused_by_name(deepseek_copy):
    rewrite_config(deepseek_copy, null=("rope_interleave",))
    with pytest.raises(ModelError, match="rope_interleave null"):
        model_run(deepseek_copy, TEXT)


def test_tensors_that_disagree_with_the_config_are_refused_by_name(deepseek_copy, tmp_path):
    null_rank = tmp_path / "null"
    shutil.copytree(deepseek_copy, null_rank)
    rewrite_config(null_rank, null=("q_lora_rank",))  # q_a_proj/q_b_proj present
    with pytest.raises(ModelError, match=r"q_a_proj\.weight is present.*q_lora_rank null"):
        model_run(null_rank, TEXT)
    bias = tmp_path / "bias"
    shutil.copytree(deepseek_copy, bias)
    rewrite_config(bias, attention_bias=True)
    with pytest.raises(ModelError, match=r"o_proj\.bias.*attention_bias=true"):
        model_run(bias, TEXT)
    _rewrite_tensors(deepseek_copy, lambda t: t.pop("model.layers.1.self_attn.kv_b_proj.weight"))
    with pytest.raises(ModelError, match=r"layers\.1\.self_attn\.kv_b_proj\.weight"):
        model_run(deepseek_copy, TEXT)


def test_config_json_written_by_transformers_reads_back(deepseek_folder):
    """transformers writes ``head_dim`` (= qk_rope_head_dim) and ``qk_head_dim``: the sizes
    come from the latent widths, not from ``head_dim``."""
    config = json.loads((deepseek_folder / "config.json").read_text())
    assert config["head_dim"] == 8 and config["qk_head_dim"] == 16
    run = model_run(deepseek_folder, TEXT)
    assert run.attentions.shape[:2] == (2, 4) and run.dtype == "float32"


def test_the_session_note_and_the_causal_values_come_from_the_latent(deepseek_folder):
    """``latent_note`` says what the direct session holds (for ``from_model``'s description);
    ``head_values`` (what the causal tools read per head) is the view's up-projected V."""
    from attention_explorer.pretrained.forward import attention_input, run_layers
    from attention_explorer.pretrained.latent.attention import head_values
    from attention_explorer.pretrained.latent.session import latent_note
    from attention_explorer.pretrained.open_model import load_model

    loaded = load_model(deepseek_folder)
    w = loaded.weights
    note = latent_note(w)
    assert "rank of 24" in note and "c_kv (16 numbers" in note and "k_pe (8 numbers" in note
    toks = loaded.tokenize(TEXT)
    h, _ = run_layers(w, toks.ids, toks.type_ids, 1)
    values = head_values(w, 1, attention_input(w, 1, h))  # [heads, n, v_dim]
    assert np.abs(values - latent_view(loaded, TEXT, 1).value).max() < 1e-12
