"""Patching, the logit lens and head attribution against transformers run with forward
hooks in float64 (tests/causal/hook_reference.py), to 1e-6, on GPT-2, Llama and the shipped
tiny-induction: every cell of every site's map."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from tests.causal.conftest import tokens_of

pytest.importorskip("transformers")
from tests.causal.hook_reference import (  # noqa: E402
    HookModel,
    metric,
    reference_attribution,
    reference_lens,
    reference_map,
)

TOL = 1e-6
MODELS = ("gpt2", "llama", "tiny")
_REFS: dict = {}


def reference(case) -> HookModel:
    """One HookModel per model folder, loaded once."""
    if case.name not in _REFS:
        _REFS[case.name] = HookModel(case.folder)
    return _REFS[case.name]


@pytest.mark.parametrize("site", ["resid_pre", "attn_out", "head_out", "pattern"])
@pytest.mark.parametrize("name", MODELS)
def test_every_cell_of_every_site_matches_the_hooks(cases, name, site):
    case = cases[name]
    ref = reference(case)
    clean, corrupted = tokens_of(case.folder, case.clean), tokens_of(case.folder, case.corrupted)
    pair = (case.answer, case.wrong)
    expected_raw = reference_map(ref, clean, corrupted, site, pair)
    m_clean = metric(ref.capture(clean).logits[-1], pair)
    m_corrupted = metric(ref.capture(corrupted).logits[-1], pair)
    result = ae.patch(
        case.folder,
        case.clean,
        case.corrupted,
        site=site,
        answer=case.answer,
        wrong=case.wrong,
        dtype="float64",
    )
    assert result.axes[1] == ("position" if site in ("resid_pre", "attn_out") else "head")
    assert abs(result.clean_metric - m_clean) < TOL
    assert abs(result.corrupted_metric - m_corrupted) < TOL
    np.testing.assert_allclose(result.patched_metric, expected_raw, atol=TOL, rtol=0)
    expected = (expected_raw - m_corrupted) / (m_clean - m_corrupted)
    np.testing.assert_allclose(np.asarray(result), expected, atol=TOL, rtol=0)
    assert np.ptp(expected) > 1e-3  # the map says something: not all one value


@pytest.mark.parametrize("name", MODELS)
def test_the_logit_lens_matches_the_hooks(cases, name):
    case = cases[name]
    lens = ae.logit_lens(case.folder, case.clean, dtype="float64")
    expected = reference_lens(reference(case), tokens_of(case.folder, case.clean))
    assert lens.log_probs.shape == expected.shape
    np.testing.assert_allclose(lens.log_probs, expected, atol=TOL, rtol=0)
    best = np.argmax(expected, axis=-1)  # [layers + 1, n]
    assert np.array_equal(lens.top_ids[:, :, 0], best)
    np.testing.assert_allclose(lens.top_prob, np.exp(expected.max(axis=-1)), atol=TOL)


@pytest.mark.parametrize("with_distractor", [True, False])
@pytest.mark.parametrize("name", MODELS)
def test_head_attribution_matches_the_hooks(cases, name, with_distractor):
    case = cases[name]
    distractor = case.wrong if with_distractor else None
    result = ae.head_attribution(
        case.folder, case.clean, target=case.answer, distractor=distractor, dtype="float64"
    )
    expected, real = reference_attribution(
        reference(case), tokens_of(case.folder, case.clean), case.answer, distractor
    )
    np.testing.assert_allclose(np.asarray(result), expected, atol=TOL, rtol=0)
    assert abs(result.total - real) < TOL
    assert np.abs(expected).max() > 0.01
