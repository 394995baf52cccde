"""Gemma 2 (``Gemma2ForCausalLM``) against transformers' exact float64 reference: soft-capped
scores and logits, ``query_pre_attn_scalar``, the four sandwich norms a layer, local (sliding
window) and global layers; the model run and model_attention on numpy and torch, a knockout
and an edit, a layer opened by from_model, Gemma2Config's defaults for keys config.json leaves
out, and what Gemma 2 support refuses by name."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from attention_explorer.pretrained import ModelError, model_run
from tests.models.exact_reference import run_reference
from tests.models.test_gemma_common import (
    BACKENDS,
    TEXT,
    check_knockout,
    check_parity,
    check_session_and_edit,
    rewrite_config,
    rewrite_tensors,
    worst,
    write_model,
)

#: Small caps and a 5-token window, so that each of them changes the numbers.
GEMMA2 = dict(
    sliding_window=5,
    attn_logit_softcapping=4.0,
    final_logit_softcapping=1.0,
    query_pre_attn_scalar=20,
)


@pytest.fixture(scope="module")
def gemma2(tmp_path_factory):
    """A random 2-layer Gemma 2: layer 0 local (window 5), layer 1 global."""
    folder = tmp_path_factory.mktemp("gemma2")
    return write_model(folder, "Gemma2Config", "Gemma2ForCausalLM", **GEMMA2)


@pytest.fixture
def gemma2_copy(gemma2, tmp_path):
    folder = tmp_path / "gemma2"
    shutil.copytree(gemma2, folder)
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
def test_gemma2_matches_the_exact_reference(gemma2, backend):
    print(f"gemma2 parity on {backend}: {check_parity(gemma2, backend):.1e}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_knockout_and_edit_match_transformers(gemma2, tmp_path, backend):
    check_knockout(gemma2, tmp_path, layer=0, head=1, backend=backend)
    check_session_and_edit(gemma2, tmp_path, layer=0, backend=backend)


def test_the_local_layer_sees_its_window_and_the_global_one_everything(gemma2):
    p = model_run(gemma2, TEXT, dtype="float64").attentions  # [layers, heads, n, n]
    i, j = np.indices(p.shape[-2:])
    assert (p[0][:, i - j >= 5] == 0).all() and (p[0][:, (i - j < 5) & (j <= i)] > 0).all()
    assert (p[1][:, (j <= i)] > 0).all()


def test_the_caps_change_the_numbers(gemma2_copy):
    """Each cap matters (and is followed by transformers): the logits stay inside ±1."""
    capped = model_run(gemma2_copy, TEXT, dtype="float64")
    assert np.abs(capped.logits).max() < 1.0
    rewrite_config(gemma2_copy, null=("attn_logit_softcapping", "final_logit_softcapping"))
    free = model_run(gemma2_copy, TEXT, dtype="float64")
    assert np.abs(free.attentions - capped.attentions).max() > 1e-3
    assert np.abs(free.logits).max() > 1.0
    assert worst(free, run_reference(gemma2_copy, list(free.ids))) <= 1e-6


def test_keys_config_json_leaves_out_take_gemma2configs_defaults(gemma2_copy):
    """Without layer_types, sliding_window, the caps and query_pre_attn_scalar, the run
    uses Gemma2Config's defaults (alternating layers, 4096, 50, 30, 256) as transformers does."""
    rewrite_config(
        gemma2_copy,
        layer_types=None,
        sliding_window=None,
        attn_logit_softcapping=None,
        final_logit_softcapping=None,
        query_pre_attn_scalar=None,
    )
    run = model_run(gemma2_copy, TEXT, dtype="float64")
    assert worst(run, run_reference(gemma2_copy, list(run.ids))) <= 1e-6
    loaded = run.model.weights
    assert loaded.score_cap == 50.0 and loaded.logit_cap == 30.0
    assert [loaded.window_of(i) for i in range(2)] == [4096, None]
    assert loaded.scales[0] == 256**-0.5


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"use_bidirectional_attention": True}, "use_bidirectional_attention"),
        ({"layer_types": ["chunked_attention", "full_attention"]}, "chunked_attention"),
        ({"layer_types": ["full_attention"]}, "layer_types must list one type"),
        ({"sliding_window": 0}, "sliding_window"),
        ({"attn_logit_softcapping": -1.0}, "attn_logit_softcapping"),
        ({"final_logit_softcapping": "30"}, "final_logit_softcapping"),
        ({"query_pre_attn_scalar": 0}, "query_pre_attn_scalar"),
        ({"hidden_activation": "relu2"}, "hidden_activation"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(gemma2_copy, changes, named):
    rewrite_config(gemma2_copy, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(gemma2_copy, TEXT)


def test_a_sliding_layer_without_a_window_is_refused(gemma2_copy):
    rewrite_config(gemma2_copy, null=("sliding_window",))
    with pytest.raises(ModelError, match="layer 0 sliding_attention, but sliding_window is null"):
        model_run(gemma2_copy, TEXT)


def test_a_missing_sandwich_norm_is_refused_by_name(gemma2_copy):
    rewrite_tensors(
        gemma2_copy, lambda t: t.pop("model.layers.1.post_feedforward_layernorm.weight")
    )
    with pytest.raises(ModelError, match=r"layers\.1\.post_feedforward_layernorm\.weight"):
        model_run(gemma2_copy, TEXT)


@pytest.mark.parametrize("family", ["gemma", "llama"])
def test_gemma2_weights_labelled_another_family_are_refused(gemma2_copy, family):
    """The sandwich norms are named, never dropped: Gemma 2's tensors as Gemma or Llama."""
    rewrite_config(gemma2_copy, model_type=family, architectures=None)
    with pytest.raises(
        ModelError, match=r"layers\.0\.pre_feedforward_layernorm\.weight is present"
    ):
        model_run(gemma2_copy, TEXT)


def test_an_edited_session_keeps_its_soft_cap(gemma2):
    """A session of a capped layer edited to plain positions is still computed with its cap
    (the model run's fast path for plain sessions would drop it)."""
    from dataclasses import replace

    from attention_explorer.engine import compute
    from attention_explorer.pretrained import from_model

    session = from_model(gemma2, TEXT, layer=1)
    assert session.config.softcap == 4.0
    edited = replace(session, config=replace(session.config, positional="none"))
    run = model_run(gemma2, TEXT, dtype="float64", edits={1: edited})
    trace = compute(edited.inputs, edited.config, dtype="float64")
    assert np.abs(run.attentions[1] - trace.stages["weights"]).max() < 1e-12
