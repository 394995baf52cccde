"""Every refusal of the causal tools is one line, a ModelError subclass (CausalError), and
names what is wrong: prompts of different lengths (both lengths), a metric equal on both
prompts, tokens the vocabulary lacks, an unknown site, a model without an output head
(MiniLM, by name), attribution on a post-norm masked LM (BERT)."""

from __future__ import annotations

import pytest

import attention_explorer as ae
from attention_explorer.causal import CausalError
from attention_explorer.pretrained import ModelError
from tests.causal.conftest import TINY, TINY_CLEAN, TINY_CORRUPTED
from tests.models.conftest import bert_folder, minilm_folder  # noqa: F401  (fixtures)


def refusal(call) -> CausalError:
    with pytest.raises(CausalError) as info:
        call()
    assert isinstance(info.value, ModelError)
    assert "\n" not in str(info.value) and "Traceback" not in str(info.value)
    return info.value


def test_prompts_of_different_lengths_name_both_lengths():
    error = refusal(lambda: ae.patch(TINY, "owl hen pig", "owl hen", answer="cat", wrong="dog"))
    assert error.what == "prompts"
    assert "3 tokens" in str(error) and "corrupted prompt 2" in str(error)


def test_an_equal_metric_is_refused_not_divided():
    error = refusal(lambda: ae.patch(TINY, TINY_CLEAN, TINY_CLEAN, answer="crab", wrong="bear"))
    assert error.what == "metric" and "on both prompts" in str(error)
    assert "crab" in str(error) and "bear" in str(error)
    from attention_explorer.causal.patching import check_metrics

    with pytest.raises(CausalError, match="to the run's precision"):
        check_metrics(3.0, 3.0 + 1e-6, ("a", "b"), "float32")  # rounding, not a difference
    check_metrics(3.0, 3.0 + 1e-6, ("a", "b"), "float64")
    with pytest.raises(CausalError, match="not finite"):
        check_metrics(float("inf"), 1.0, ("a", "b"), "float64")


@pytest.mark.parametrize(
    ("answer", "wrong", "named"),
    [
        ("zebra", "bear", "'zebra'"),
        ("crab", 9999, "9999"),
        ("crab", -1, "-1"),
        (True, "bear", "True"),
    ],
)
def test_tokens_not_in_the_vocabulary(answer, wrong, named):
    error = refusal(lambda: ae.patch(TINY, TINY_CLEAN, TINY_CORRUPTED, answer=answer, wrong=wrong))
    assert error.what == "token" and named in str(error) and "tiny-induction" in str(error)


def test_missing_tokens_and_unknown_sites():
    assert "answer token and a wrong token" in str(
        refusal(lambda: ae.patch(TINY, TINY_CLEAN, TINY_CORRUPTED, answer="crab"))
    )
    error = refusal(
        lambda: ae.patch(TINY, TINY_CLEAN, TINY_CORRUPTED, site="mlp", answer="crab", wrong="bear")
    )
    assert "'mlp'" in str(error) and "resid_pre, attn_out, head_out, pattern" in str(error)
    assert "target token" in str(refusal(lambda: ae.head_attribution(TINY, TINY_CLEAN)))
    error = refusal(lambda: ae.head_attribution(TINY, TINY_CLEAN, target="crab", distractor="x"))
    assert "distractor token 'x'" in str(error)
    error = refusal(lambda: ae.logit_lens(TINY, TINY_CLEAN, dtype="float16"))
    assert "float16" in str(error)
    error = refusal(lambda: ae.patch(TINY, TINY_CLEAN, b"owl", answer="crab", wrong="bear"))
    assert "corrupted prompt must be a string, not bytes" in str(error)
    assert "text must be a string" in str(refusal(lambda: ae.logit_lens(TINY, None)))


def test_a_model_without_an_output_head_is_refused_by_name(minilm_folder):  # noqa: F811
    for call in (
        lambda: ae.patch(minilm_folder, "a cat", "a dog", answer="cat", wrong="dog"),
        lambda: ae.logit_lens(minilm_folder, "a cat"),
        lambda: ae.head_attribution(minilm_folder, "a cat", target="cat"),
    ):
        error = refusal(call)
        assert error.what == "output"
        assert "all-MiniLM-L6-v2 has no output head" in str(error)


def test_attribution_needs_a_pre_norm_model(bert_folder):  # noqa: F811
    error = refusal(lambda: ae.head_attribution(bert_folder, "the cat sat", target="cat"))
    assert error.what == "architecture" and "post-norm" in str(error)
    # patching and the lens work on it: they read the model's own output head
    lens = ae.logit_lens(bert_folder, "the cat sat")
    assert lens.log_probs.shape[0] == 3
