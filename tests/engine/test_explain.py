"""explain(): the steps carry the real numbers, checked against hand computations from the trace."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_explorer.engine import AttentionConfig, AttentionInputs, compute, explain
from attention_explorer.engine.explain import format_number


@pytest.fixture(scope="module")
def projection_trace():
    """4 heads sharing 2 key/value heads, causal, biases, output projection; float64."""
    rng = np.random.default_rng(3)
    d_model, h, kv, dk = 6, 4, 2, 3
    inputs = AttentionInputs(
        X=rng.normal(size=(5, d_model)),  # [n, d_model]
        W_Q=rng.normal(size=(d_model, h * dk)),
        W_K=rng.normal(size=(d_model, kv * dk)),
        W_V=rng.normal(size=(d_model, kv * dk)),
        W_O=rng.normal(size=(h * dk, d_model)),
        b_Q=rng.normal(size=h * dk),
        b_K=rng.normal(size=kv * dk),
        b_O=rng.normal(size=d_model),
    )
    config = AttentionConfig(
        mode="projection",
        heads=h,
        d_model=d_model,
        d_k=dk,
        kv_heads=kv,
        mask="causal",
        temperature=2.0,
    )
    return compute(inputs, config, dtype="float64", tokens=["the", "cat", "sat", "on", "mat"])


def direct_trace(normalizer="softmax", mask="none", **config_changes):
    """A small direct-mode float64 trace."""
    rng = np.random.default_rng(9)
    inputs = AttentionInputs(
        Q=rng.normal(size=(2, 4, 3)), K=rng.normal(size=(2, 4, 3)), V=rng.normal(size=(2, 4, 2))
    )
    config = AttentionConfig(
        mode="direct", heads=2, normalizer=normalizer, mask=mask, **config_changes
    )
    return compute(inputs, config, dtype="float64")


def assert_terms(step, expected_values):
    values = [value for _, value in step.terms]
    np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-15)


def test_scores_are_the_dot_product_term_by_term(projection_trace):
    tr = projection_trace
    head, i, j = 3, 4, 1
    q, k = tr["Q"][head, i], tr["K"][head, j]  # [d_k]
    ex = explain(tr, "scores", head, i, j)
    (step,) = ex.steps
    assert_terms(step, q * k)
    assert step.result == pytest.approx(float(q @ k), rel=1e-12)
    assert ex.value == step.result
    text = ex.text()
    assert "q · k for query “mat” and key “cat”" in text
    assert "q_4" not in text and "k_1" not in text  # tokens by name, never by index
    for t in range(3):
        assert f"{format_number(q[t])}×{format_number(k[t])}" in text
        assert format_number(q[t] * k[t]) in text
    assert ex.headline.startswith("scores[mat, cat] (head 3) = ")
    assert format_number(q @ k) in ex.headline


def test_scaled_shows_scale_and_temperature(projection_trace):
    tr = projection_trace
    ex = explain(tr, "scaled", 1, 2, 0)
    last = ex.steps[-1]
    score = tr["scores"][1, 2, 0]
    assert_terms(last, [score])
    assert last.result == pytest.approx(score / math.sqrt(3) / 2.0, rel=1e-12)
    assert "1/sqrt(3)" in last.formula and format_number(1 / math.sqrt(3)) in last.formula
    assert "temperature 2" in last.formula
    assert len(ex.steps) == 2  # the dot product first, then the scaling


def test_masked_cell_says_why_it_is_hidden(projection_trace):
    tr = projection_trace
    hidden = explain(tr, "masked", 0, 1, 3)
    assert hidden.value == -math.inf
    assert "causal" in hidden.text() and "key “on” comes after query “cat”" in hidden.text()
    reason = hidden.steps[-1].reason
    assert (reason.kind, reason.query, reason.key, reason.key_label) == ("causal", 1, 3, "on")
    assert "= -inf" in hidden.text()
    seen = explain(tr, "masked", 0, 3, 1)
    assert "query “on” may attend to key “cat”" in seen.text()
    assert seen.steps[-1].result == pytest.approx(tr["scaled"][0, 3, 1], rel=1e-12)
    assert "causal" in explain(tr, "mask", 0, 0, 2).text()


def test_padding_and_custom_mask_reasons():
    padded = direct_trace(mask="padding", padded_keys=(2,))
    assert "key “t2” is padding" in explain(padded, "masked", 0, 0, 2).text()
    custom = direct_trace(mask="custom", custom_mask=((True, False, True, True),) * 4)
    assert "the custom mask hides key “t1” from query “t3”" in (
        explain(custom, "masked", 1, 3, 1).text()
    )


def test_softmax_steps_match_a_hand_computation(projection_trace):
    tr = projection_trace
    head, i, j = 2, 3, 1
    masked = tr["masked"][head, i]  # [m], -inf after key i
    visible = masked[: i + 1]
    row_max = visible.max()
    exps = np.concatenate([np.exp(visible - row_max), np.zeros(masked.size - i - 1)])
    total = exps.sum()
    ex = explain(tr, "weights", head, i, j)
    find, exponentiate, add, divide = ex.steps
    assert find.result == row_max
    assert_terms(exponentiate, exps)
    assert add.result == pytest.approx(total, rel=1e-12)
    assert divide.result == pytest.approx(exps[j] / total, rel=1e-12)
    assert divide.result == pytest.approx(tr["weights"][head, i, j], rel=1e-12)
    text = ex.text()
    assert f"exp({format_number(masked[j])} - {format_number(row_max)})" in text
    assert f"{format_number(exps[j])} / {format_number(total)}" in text
    assert "“on”" in text and "“cat”" in text


def test_softmax_of_a_fully_masked_row():
    tr = direct_trace(
        mask="custom", custom_mask=((True,) * 4, (False,) * 4, (True,) * 4, (True,) * 4)
    )
    ex = explain(tr, "weights", 0, 1, 2)
    assert ex.value == 0.0
    assert "all 0" in ex.text()


def test_sparsemax_steps():
    tr = direct_trace(normalizer="sparsemax", scale="custom", scale_factor=2.0)
    head, i = 1, 2
    z = tr["masked"][head, i]  # [m]
    # hand sparsemax: sort, find the support, tau
    zs = np.sort(z)[::-1]
    k = np.arange(1, z.size + 1)
    support_size = int(np.sum(1 + k * zs > np.cumsum(zs)))
    tau = (zs[:support_size].sum() - 1) / support_size
    expected = np.maximum(z - tau, 0)
    np.testing.assert_allclose(tr["weights"][head, i], expected, atol=1e-12)
    for j in range(z.size):
        ex = explain(tr, "weights", head, i, j)
        keep, weight = ex.steps
        assert f"keeps {support_size} of {z.size} keys" in keep.title
        assert sorted(v for _, v in keep.terms) == pytest.approx(sorted(zs[:support_size]))
        assert weight.result == pytest.approx(expected[j], abs=1e-12)
        assert f"max({format_number(z[j])} - {format_number(tau)}, 0)" in weight.title


def test_sigmoid_step():
    tr = direct_trace(normalizer="sigmoid", mask="causal")
    x = tr["masked"][0, 3, 2]
    (step,) = explain(tr, "weights", 0, 3, 2).steps
    assert_terms(step, [x])
    assert step.result == pytest.approx(1 / (1 + math.exp(-x)), rel=1e-12)
    assert "1 / (1 + exp(-x))" in step.title
    hidden = explain(tr, "weights", 0, 0, 3)
    assert hidden.value == 0.0 and hidden.steps[0].terms == [("x", -math.inf)]


def test_head_output_is_the_weighted_sum_of_values(projection_trace):
    tr = projection_trace
    head, i, j = 1, 4, 2
    w, v = tr["weights"][head, i], tr["V"][head, :, j]  # [m], [m]
    ex = explain(tr, "head_outputs", head, i, j)
    (step,) = ex.steps
    assert_terms(step, w * v)
    assert step.result == pytest.approx(float(w @ v), rel=1e-12)
    assert step.hidden_terms == 0
    assert f"{format_number(w[0])}×{format_number(v[0])}" in ex.text()


def test_concat_names_the_head_and_column(projection_trace):
    tr = projection_trace
    ex = explain(tr, "concat", 0, 2, 7)  # d_v = 3: column 7 is head 2, column 1
    assert "column 1 of head 2" in ex.text()
    assert ex.steps[0].result == tr["head_outputs"][2, 2, 1]


def test_output_is_concat_times_w_o_plus_bias(projection_trace):
    tr = projection_trace
    i, j = 1, 4
    concat, W_O, b_O = tr["concat"][i], tr.inputs.W_O[:, j], tr.inputs.b_O[j]
    ex = explain(tr, "output", 0, i, j)
    (step,) = ex.steps
    products, bias = step.terms[:-1], step.terms[-1]
    assert step.hidden_terms == 12 - 8  # h*d_v = 12 terms, 8 shown by default
    np.testing.assert_allclose([v for _, v in products], (concat * W_O)[:8], rtol=1e-12)
    assert bias == (f"bias b_O[{j}]", b_O)
    assert step.result == pytest.approx(float(concat @ W_O + b_O), rel=1e-12)
    assert "... and 4 more" in ex.text()
    full = explain(tr, "output", 0, i, j, max_terms=100).steps[0]
    assert sum(v for _, v in full.terms) == pytest.approx(step.result, rel=1e-10)


@pytest.mark.parametrize(
    "name,head,column", [("Q", 3, 3 * 3 + 2), ("K", 3, 1 * 3 + 2), ("V", 1, 0 * 3 + 2)]
)
def test_projection_terms(projection_trace, name, head, column):
    tr = projection_trace
    i, j = 2, 2
    x = tr["X"][i]  # [d_model]
    W = getattr(tr.inputs, f"W_{name}")[:, column]  # [d_model]
    bias = getattr(tr.inputs, f"b_{name}")
    ex = explain(tr, name, head, i, j)
    (step,) = ex.steps
    assert f"column {column} of W_{name}" in step.title
    n_products = len(x)
    np.testing.assert_allclose([v for _, v in step.terms[:n_products]], x * W, rtol=1e-12)
    expected = float(x @ W) + (float(bias[column]) if bias is not None else 0.0)
    if bias is not None:
        assert step.terms[-1] == (f"bias b_{name}[{column}]", bias[column])
    else:
        assert len(step.terms) == n_products
    assert step.result == pytest.approx(expected, rel=1e-12)
    assert step.result == tr.stage(name, head)[i, j]


def test_direct_mode_inputs_are_typed():
    tr = direct_trace()
    assert "typed directly" in explain(tr, "Q", 1, 0, 0).text()


def test_explain_writes_numbers_with_the_one_formatter():
    from attention_explorer.core import numbers

    assert format_number is numbers.format_number  # no second decimals policy here
    assert format_number(1.2e31) == "1.2e+31"
    assert format_number(-math.inf) == "-inf"
    assert format_number(-0.00001) == "≈0"


def test_a_projected_cell_names_its_matrix_entries_plainly(projection_trace):
    text = explain(projection_trace, "Q", 1, 2, 0).text()
    col = 1 * 3  # head 1, d_k 3: column 3 of W_Q
    assert f"W_Q[0, {col}]" in text and f"W_Q[1, {col}]" in text
    assert "[:, " not in text and "][" not in text
    assert "row “sat” of X" in text and "X[sat, 0]·W_Q[0, 3]" in text


def test_token_names_with_braces_are_written_literally():
    inputs = AttentionInputs(
        X=np.eye(2), W_Q=np.eye(2), W_K=np.eye(2), W_V=np.eye(2), W_O=np.eye(2)
    )
    config = AttentionConfig(mode="projection", heads=1, d_model=2)
    trace = compute(inputs, config, dtype="float64", tokens=["{t}", "<img src=x>"])
    text = explain(trace, "Q", 0, 0, 1).text()
    assert "X[{t}, 0]" in text and "Q[{t}, 1]" in text


def test_cells_outside_a_stage_are_named_by_their_labels(projection_trace):
    with pytest.raises(IndexError, match="rows “the” to “mat”"):
        explain(projection_trace, "weights", 0, 9, 0)


def test_errors_for_missing_stages_and_cells():
    tr = compute(direct_trace().inputs, direct_trace().config, heads=[0], stages={"weights"})
    with pytest.raises(KeyError):
        explain(tr, "scores", 0, 0, 0)
    with pytest.raises(KeyError):
        explain(tr, "weights", 1, 0, 0)  # head 1 was not computed
    with pytest.raises(IndexError):
        explain(tr, "weights", 0, 4, 0)


@pytest.mark.parametrize(
    ("value", "places", "text"),
    [
        (10, 0, "10"),
        (100.0, 2, "100"),
        (10.5, 4, "10.5"),
        (0.25, 4, "0.25"),
        (-0.0, 4, "0"),
        (1200.0, 4, "1200"),
        (-1.41421356, 4, "-1.4142"),
        (float("-inf"), 4, "-inf"),
    ],
)
def test_format_number_strips_only_fraction_zeros(value, places, text):
    assert format_number(value, places) == text
