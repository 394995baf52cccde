"""What the causal tools promise beyond parity: patching a run with its own activations
changes nothing (1 for the clean run, 0 for the corrupted), the whole residual at any block
restores the clean answer, attribution's parts add up to the real logit difference, float32
and torch agree with float64 numpy, and progress, cancel and the estimate work."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.causal import PatchCancelled
from attention_explorer.causal.patching import SITES, metric_map, patched_final, run_metric
from attention_explorer.causal.runs import cached_run, last_logits, prepare

MODELS = ("gpt2", "llama", "tiny")


@pytest.mark.parametrize("name", MODELS)
def test_patching_a_run_with_its_own_activations_changes_nothing(cases, name):
    case = cases[name]
    prepared = prepare(case.folder, "float64")
    clean, corrupted = cached_run(prepared, case.clean), cached_run(prepared, case.corrupted)
    pair = (case.answer, case.wrong)
    m_clean, m_corrupted = run_metric(prepared, clean, pair), run_metric(prepared, corrupted, pair)
    for site in SITES:
        own_clean = metric_map(prepared, clean, clean, site, pair)
        own_corrupted = metric_map(prepared, corrupted, corrupted, site, pair)
        np.testing.assert_allclose(
            (own_clean - m_corrupted) / (m_clean - m_corrupted), 1, atol=1e-9
        )
        np.testing.assert_allclose(
            (own_corrupted - m_corrupted) / (m_clean - m_corrupted), 0, atol=1e-9
        )


@pytest.mark.parametrize("name", MODELS)
def test_the_whole_clean_residual_at_any_block_restores_the_clean_answer(cases, name):
    case = cases[name]
    prepared = prepare(case.folder, "float64")
    clean, corrupted = cached_run(prepared, case.clean), cached_run(prepared, case.corrupted)
    expected = last_logits(prepared.w, clean.final)
    for layer in range(prepared.w.n_layers):
        final = patched_final(prepared.w, corrupted, clean, "resid_pre", layer, slice(None))
        np.testing.assert_allclose(last_logits(prepared.w, final), expected, atol=1e-9)
    # every head's output and weights at the last block: that block's output is the clean one
    last = prepared.w.n_layers - 1
    for site in ("head_out", "pattern"):
        mixed = patched_final(prepared.w, corrupted, clean, site, last, slice(None))
        assert not np.allclose(
            last_logits(prepared.w, mixed), last_logits(prepared.w, corrupted.final)
        )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", MODELS)
def test_attribution_parts_sum_to_the_real_logit_difference(cases, name, dtype):
    case = cases[name]
    result = ae.head_attribution(
        case.folder, case.clean, target=case.answer, distractor=case.wrong, dtype=dtype
    )
    logits = ae.model_run(case.folder, case.clean, dtype="float64").logits[-1]
    real = logits[case.answer] - logits[case.wrong]
    tol = 1e-9 if dtype == "float64" else 2e-3 * (1 + abs(real))
    parts = (
        result.values.sum()
        + result.attn_bias.sum()
        + result.mlp.sum()
        + result.embed
        + result.norm_bias
        + result.head_bias
    )
    assert abs(parts - real) < tol
    assert abs(result.total - real) < tol
    # each part matters: the heads alone do not make the total
    assert abs(result.values.sum() - real) > 10 * tol
    alone = ae.head_attribution(case.folder, case.clean, target=case.answer, dtype=dtype)
    assert abs(alone.parts_sum - logits[case.answer]) < tol


@pytest.mark.parametrize("site", list(SITES))
def test_float32_is_close_to_float64(cases, site):
    case = cases["tiny"]
    options = dict(site=site, answer=case.answer, wrong=case.wrong)
    exact = ae.patch(case.folder, case.clean, case.corrupted, dtype="float64", **options)
    fast = ae.patch(case.folder, case.clean, case.corrupted, dtype="float32", **options)
    np.testing.assert_allclose(np.asarray(fast), np.asarray(exact), atol=1e-4)
    assert np.asarray(fast).dtype == np.float64  # the map is always float64


def test_torch_matches_numpy(cases):
    pytest.importorskip("torch")
    case = cases["llama"]
    for site in SITES:
        options = dict(site=site, answer=case.answer, wrong=case.wrong, dtype="float64")
        on_numpy = ae.patch(case.folder, case.clean, case.corrupted, **options)
        on_torch = ae.patch(case.folder, case.clean, case.corrupted, backend="torch", **options)
        np.testing.assert_allclose(np.asarray(on_torch), np.asarray(on_numpy), atol=1e-9)
    lens = ae.logit_lens(case.folder, case.clean, dtype="float64", backend="torch")
    np.testing.assert_allclose(
        lens.log_probs, ae.logit_lens(case.folder, case.clean, dtype="float64").log_probs, atol=1e-9
    )
    pair = dict(target=case.answer, distractor=case.wrong, dtype="float64")
    np.testing.assert_allclose(
        np.asarray(ae.head_attribution(case.folder, case.clean, backend="torch", **pair)),
        np.asarray(ae.head_attribution(case.folder, case.clean, **pair)),
        atol=1e-9,
    )


def test_progress_cancel_and_estimate(cases):
    case = cases["tiny"]
    seen = []
    result = ae.patch(
        case.folder,
        case.clean,
        case.corrupted,
        site="head_out",
        answer=case.answer,
        wrong=case.wrong,
        progress=lambda done, total: seen.append((done, total)),
    )
    layers, heads = result.shape
    assert seen == [(i + 1, layers * heads) for i in range(layers * heads)]
    asked = []

    def cancelled():
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(PatchCancelled, match="cancelled"):
        ae.patch(
            case.folder,
            case.clean,
            case.corrupted,
            site="resid_pre",
            answer=case.answer,
            wrong=case.wrong,
            cancelled=cancelled,
        )
    assert len(asked) == 4
    from attention_explorer.causal import patch_estimate

    assert 0 < patch_estimate(case.folder, case.clean, site="resid_pre") < 60


def test_the_result_reads_as_an_array_with_named_axes(cases):
    case = cases["tiny"]
    result = ae.patch(
        case.folder, case.clean, case.corrupted, site="resid_pre", answer="crab", wrong="bear"
    )
    assert (result.answer, result.wrong) == ("crab", "bear")
    assert np.asarray(result).shape == (2, len(result.tokens)) == result.shape
    assert "layer=2" in repr(result) and f"position={len(result.tokens)}" in repr(result)
    assert result.col_labels[3] == f"3 {result.tokens[3]}"
    lens = ae.logit_lens(case.folder, case.clean)
    assert lens.row_labels[0] == "embeddings" and len(lens.row_labels) == 3
    ranks = lens.final_ranks()
    assert (ranks[-1] == 0).all()
    assert lens.rank_of(lens.top_ids[1, 4, 0])[1, 4] == 0
