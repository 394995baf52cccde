"""Long-context RoPE (issue 28): ``dynamic``, ``yarn`` and ``longrope`` scaling as
transformers' ``modeling_rope_utils`` computes it: the inverse frequencies (which for dynamic
and longrope depend on the text's length) and the attention factor on cos and sin, checked
against transformers' own rope init functions; the settings read from ``rope_scaling`` and
``rope_parameters``; what is refused, by name. Whole-model parity (Llama with each type) is in
``test_exact_parity.py``; here a knockout and an edit are checked against the float64
reference too.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402

from attention_explorer.engine.config import RopeScaling  # noqa: E402
from attention_explorer.engine.engine_errors import AttentionInputError  # noqa: E402
from attention_explorer.kernels import tables  # noqa: E402
from attention_explorer.pretrained import from_model, model_run  # noqa: E402
from attention_explorer.pretrained.model_errors import ModelError  # noqa: E402
from attention_explorer.pretrained.rotary import scaling_from_checkpoint  # noqa: E402
from tests.models import exact_reference  # noqa: E402
from tests.models.conftest import train_bpe  # noqa: E402

HEAD_DIM = 16
SHORT = [1.0, 1.1, 1.3, 1.6, 2.0, 2.5, 3.0, 4.0]
LONG = [1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 16.0]

#: rope dict -> the lengths to check it at (dynamic and longrope depend on the length)
CASES = {
    "dynamic": ({"rope_type": "dynamic", "factor": 4.0}, (None, 64, 200)),
    "yarn": ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}, (None,)),
    "yarn-mscale": (
        {
            "rope_type": "yarn",
            "factor": 8.0,
            "original_max_position_embeddings": 16,
            "beta_fast": 16,
            "beta_slow": 2,
            "mscale": 0.8,
            "mscale_all_dim": 0.5,
            "truncate": False,
        },
        (None,),
    ),
    "longrope": (
        {
            "rope_type": "longrope",
            "short_factor": SHORT,
            "long_factor": LONG,
            "original_max_position_embeddings": 32,
        },
        (None, 20, 33, 100),
    ),
}


def _llama_config(rope: dict, positions: int = 64):
    return transformers.LlamaConfig(
        hidden_size=64,
        num_attention_heads=4,
        max_position_embeddings=positions,
        rope_theta=1000.0,
        rope_scaling=dict(rope),
    )


@pytest.mark.parametrize("case", list(CASES))
def test_frequencies_and_attention_factor_are_transformers_own(case):
    rope, lengths = CASES[case]
    config = _llama_config(rope)
    scaling = scaling_from_checkpoint(rope, config.to_dict())
    for seq_len in lengths:
        kwargs = {} if seq_len is None else {"seq_len": seq_len}
        theirs, factor = ROPE_INIT_FUNCTIONS[rope["rope_type"]](config, None, **kwargs)
        ours = tables.inverse_frequencies(HEAD_DIM, 1000.0, scaling, seq_len)
        np.testing.assert_allclose(ours, theirs.double().numpy(), rtol=3e-7, atol=0)
        assert tables.attention_factor(scaling) == pytest.approx(factor, rel=1e-15)
    default = tables.inverse_frequencies(HEAD_DIM, 1000.0)
    assert not np.allclose(tables.inverse_frequencies(HEAD_DIM, 1000.0, scaling, 200), default)


def test_dynamic_changes_nothing_within_the_context_and_longrope_switches_past_the_original():
    dynamic = scaling_from_checkpoint(CASES["dynamic"][0], {"max_position_embeddings": 64})
    default = tables.inverse_frequencies(HEAD_DIM, 1000.0)
    assert np.array_equal(tables.inverse_frequencies(HEAD_DIM, 1000.0, dynamic, 64), default)
    assert tables.inverse_frequencies(HEAD_DIM, 1000.0, dynamic, 65)[-1] < default[-1]
    longrope = scaling_from_checkpoint(CASES["longrope"][0], {"max_position_embeddings": 64})
    short = tables.inverse_frequencies(HEAD_DIM, 1000.0, longrope, 32)
    long = tables.inverse_frequencies(HEAD_DIM, 1000.0, longrope, 33)
    np.testing.assert_allclose(short * np.array(SHORT), default, rtol=1e-15)
    np.testing.assert_allclose(long * np.array(LONG), default, rtol=1e-15)
    # no factor: transformers' max_position_embeddings / original = 2; sqrt(1 + ln 2 / ln 32)
    assert tables.attention_factor(longrope) == pytest.approx(
        math.sqrt(1 + math.log(2) / math.log(32))
    )


def test_the_settings_read_as_transformers_reads_them():
    context = {"max_position_embeddings": 64, "original_max_position_embeddings": 16}
    yarn = scaling_from_checkpoint({"rope_type": "yarn", "factor": 4.0}, context)
    assert yarn.original_max_position_embeddings == 16  # the top-level key wins (standardize)
    assert (yarn.beta_fast, yarn.beta_slow, yarn.truncate) == (32.0, 1.0, True)
    assert tables.attention_factor(yarn) == pytest.approx(0.1 * math.log(4) + 1)
    no_factor = scaling_from_checkpoint(
        {"rope_type": "yarn", "factor": None, "original_max_position_embeddings": 16},
        {"max_position_embeddings": 64},
    )
    assert no_factor.factor == 4.0
    old_style = scaling_from_checkpoint({"type": "dynamic", "factor": 2.0}, context)
    assert old_style.kind == "dynamic" and old_style.max_position_embeddings == 64


@pytest.mark.parametrize(
    ("rope", "context", "named"),
    [
        ({"rope_type": "proportional", "factor": 2.0}, {}, "'proportional'"),
        (
            {"rope_type": "yarn", "factor": 2.0, "low_freq_factor": 1.0},
            {"max_position_embeddings": 8},
            "'low_freq_factor'",
        ),
        ({"rope_type": "dynamic", "factor": 2.0}, {}, "max_position_embeddings"),
        (
            {"rope_type": "longrope", "short_factor": [1.0]},
            {"max_position_embeddings": 8},
            "long_factor",
        ),
        (
            {"rope_type": "longrope", "short_factor": [1.0], "long_factor": ["x"]},
            {"max_position_embeddings": 8},
            "long_factor",
        ),
        ({"rope_type": "default", "partial_rotary_factor": 0.5}, {}, "partial_rotary_factor"),
    ],
)
def test_what_is_not_implemented_is_refused_by_name(rope, context, named):
    with pytest.raises(AttentionInputError, match=named):
        scaling_from_checkpoint(rope, context)


def test_an_engine_session_cannot_ask_for_a_long_context_scaling():
    """The engine's config carries a kind and a factor only: a yarn record without the
    model's context is refused, never computed approximately."""
    with pytest.raises(AttentionInputError, match="max_position_embeddings"):
        RopeScaling("yarn", factor=2.0)


# ---------------------------------------------------------------- whole checkpoints


def _checkpoint(folder, rope: dict, positions: int = 64, head_dim: int = 8) -> None:
    train_bpe(folder)
    from tokenizers import Tokenizer

    vocab = Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab_size()
    torch.manual_seed(1)
    config = transformers.LlamaConfig(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=positions,
        rms_norm_eps=1e-5,
        rope_theta=500.0,
        rope_scaling=dict(rope),
        tie_word_embeddings=False,
    )
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0) if p.dim() == 2 else p.add_(0.2 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)


TEXT = "The cat sat on the mat because it was"
LONGROPE_8 = {
    "rope_type": "longrope",
    "short_factor": [1.0, 1.2, 1.5, 2.0],
    "long_factor": [1.0, 2.0, 4.0, 8.0],
    "original_max_position_embeddings": 8,
}


@pytest.fixture(scope="module")
def longrope_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("longrope")
    _checkpoint(folder, LONGROPE_8)
    return folder


def test_a_knockout_and_an_edit_match_the_float64_reference(longrope_model):
    """Longrope past its original context (long factors, attention factor √2): a knocked-out
    head and an edited layer (W_V doubled for head 0 via the session from_model opens) against
    transformers in float64 with the same change made to its weights."""
    folder = longrope_model
    ids = list(model_run(folder, TEXT, dtype="float64").ids)
    assert len(ids) > 8  # beyond original_max_position_embeddings: the long factors
    model = exact_reference.load_float64(folder)
    attn = model.model.layers[0].self_attn
    with torch.no_grad():
        attn.o_proj.weight[:, 8:16] = 0.0  # knock out head 1 (d_k 8): its columns of W_O
    with exact_reference.exact_float64():
        knocked_ref = exact_reference.forward_reference(model, ids)
    knocked = model_run(folder, TEXT, dtype="float64", knockout=[(0, 1)])
    for name in ("attentions", "hidden", "logits"):
        np.testing.assert_allclose(
            getattr(knocked, name), getattr(knocked_ref, name), rtol=0, atol=1e-6, err_msg=name
        )
    session = from_model(folder, TEXT, layer=0)
    assert session.config.mode == "projection"  # the engine's RoPE has longrope
    assert session.config.rope_scaling == "longrope"
    W_V = np.array(session.inputs.W_V, dtype=np.float64)  # [d, kv*d_v]
    W_V[:, :8] *= 2.0  # kv head 0's values
    edited = replace(session, inputs=replace(session.inputs, W_V=W_V))
    run = model_run(folder, TEXT, dtype="float64", edits={0: edited})
    model = exact_reference.load_float64(folder)
    with torch.no_grad():
        model.model.layers[0].self_attn.v_proj.weight[:8] *= 2.0  # kv head 0's values
    with exact_reference.exact_float64():
        edited_ref = exact_reference.forward_reference(model, ids)
    for name in ("attentions", "hidden", "logits"):
        np.testing.assert_allclose(
            getattr(run, name), getattr(edited_ref, name), rtol=0, atol=1e-6, err_msg=name
        )


def test_a_dynamic_model_reads_past_its_context_and_a_bad_setting_is_refused(tmp_path):
    _checkpoint(tmp_path, {"rope_type": "dynamic", "factor": 4.0}, positions=8)
    run = model_run(tmp_path, TEXT, dtype="float64")
    assert len(run.ids) > 8  # beyond max_position_embeddings: the base has grown
    ref = exact_reference.run_reference(tmp_path, list(run.ids))
    np.testing.assert_allclose(run.logits, ref.logits, rtol=0, atol=1e-6)
    config = json.loads((tmp_path / "config.json").read_text())
    key = "rope_parameters" if "rope_parameters" in config else "rope_scaling"
    config[key] = {**config[key], "rope_type": "proportional"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=f"{key}.*'proportional'"):
        model_run(tmp_path, TEXT)
