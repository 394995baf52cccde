"""The walkthrough steps: every stage in order, every number read from the live trace."""

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attention_explorer.core.numbers import format_number
from attention_explorer.engine import AttentionConfig, AttentionInputs, compute, explain
from attention_explorer.session import starter_session
from attention_explorer.walkthrough import WalkStep, choose_focus, steps_for

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]\d+)?")
EXPLAINED = (
    "Q",
    "K",
    "V",
    "scores",
    "scaled",
    "mask",
    "masked",
    "weights",
    "head_outputs",
    "concat",
    "output",
)
PIPELINE = ["Q", "K", "V", "scores", "scaled", "masked", "weights", "head_outputs"]


def rng_array(seed, shape):
    return np.round(np.random.default_rng(seed).normal(0, 1, size=shape), 2)


def direct_trace(heads=1, n=3, dk=2, w_o=False, mask="none", normalizer="softmax", seed=0, **kw):
    """A direct-mode trace with typed Q, K, V (and optionally W_O)."""
    kv = kw.get("kv_heads") or heads
    inputs = AttentionInputs(
        Q=rng_array(seed, (heads, n, dk)),
        K=rng_array(seed + 1, (kv, n, dk)),
        V=rng_array(seed + 2, (kv, n, dk)),
        W_O=rng_array(seed + 3, (heads * dk, 3)) if w_o else None,
    )
    config = AttentionConfig(mode="direct", heads=heads, mask=mask, normalizer=normalizer, **kw)
    tokens = ("I", "love", "pizza", "a", "b", "c")[:n]
    return compute(inputs, config, tokens=tokens)


def projection_trace(heads=1, d_model=4, n=3, positional="sinusoidal", mask="none", **kw):
    """A projection-mode trace from embeddings, with W_O."""
    width = d_model  # heads * d_k with the default d_k
    inputs = AttentionInputs(
        X=rng_array(10, (n, d_model)),
        W_Q=rng_array(11, (d_model, width)),
        W_K=rng_array(12, (d_model, width)),
        W_V=rng_array(13, (d_model, width)),
        W_O=rng_array(14, (width, d_model)),
    )
    config = AttentionConfig(
        mode="projection", heads=heads, d_model=d_model, positional=positional, mask=mask, **kw
    )
    return compute(inputs, config, tokens=("the", "cat", "sat", "on", "a", "mat")[:n])


def default_focus(trace, head):
    """The (query, key) the walkthrough follows when nobody chose one."""
    focus = choose_focus(trace, head)
    return focus.row, focus.col


def starter_trace():
    data = starter_session()
    return compute(data.inputs, data.config, tokens=data.tokens)


def allowed_numbers(trace) -> set[str]:
    """Every number the trace holds, as format_number prints it, plus its explain() texts."""
    allowed: set[str] = set()
    arrays = [a for a in trace.stages.values() if a is not None and a.dtype != bool]
    if trace.inputs is not None:
        arrays += list(trace.inputs.arrays().values())
    for array in arrays:
        allowed |= {format_number(v) for v in np.asarray(array).ravel()}
    allowed.add(format_number(trace.scale))
    for stage in EXPLAINED:
        if not trace.has(stage):
            continue
        for head in trace.heads:
            rows, cols = trace.stage(stage, head).shape
            for i in range(rows):
                for j in range(cols):
                    text = explain(trace, stage, head, i, j, max_terms=10_000).text()
                    allowed |= set(NUMBER.findall(text))
    # Positions, sizes and counts (row 3, d_model = 8, "2 more") are structure, not data.
    biggest = max(max(a.shape) for a in arrays) + trace.config.heads + 1
    allowed |= {str(k) for k in range(biggest * max(1, trace.config.heads))}
    return allowed


def assert_numbers_from_trace(trace, steps):
    allowed = allowed_numbers(trace)
    for step in steps:
        if step.key == "about":
            continue  # the example author's own words
        for number in NUMBER.findall(step.plain()):
            assert number in allowed, f"{number} in step {step.key!r} is not from the trace"


def test_allowed_numbers_is_not_a_blank_cheque():
    allowed = allowed_numbers(starter_trace())
    assert "0.12345" not in allowed and "3.1416" not in allowed
    assert format_number(starter_trace().stage("weights", 0)[3, 1]) in allowed


def test_direct_single_head_covers_every_stage_in_order():
    steps = steps_for(direct_trace())
    assert [s.stage for s in steps] == PIPELINE
    assert [s.key for s in steps][-2:] == ["weights", "weighted_sum"]
    assert "typed directly" in steps[0].plain() or "directly" in steps[0].plain()
    assert all(s.head == 0 for s in steps)


def test_projection_single_head_with_positions_and_output():
    trace = projection_trace()
    steps = steps_for(trace)
    assert [s.stage for s in steps] == ["X", *PIPELINE, "output"]
    first = steps[0]
    assert first.title == "Embeddings + positions"
    assert "sinusoidal" in first.plain()
    i = first.cells[0][0]
    # Both the typed row and the row with its position come from the trace.
    for value in (trace.inputs.X[i, 0], trace.stage("X")[i, 0]):
        assert format_number(value) in first.plain()
    assert "concat" not in [s.key for s in steps]
    assert "one head" in steps[-1].plain()


def test_several_heads_add_other_heads_concat_and_output():
    trace = starter_trace()
    steps = steps_for(trace)
    stages = [s.stage for s in steps]
    assert stages == ["X", *PIPELINE, "weights", "concat", "output"]
    other = steps[-3]
    assert other.key == "head_1" and other.head == 1
    assert [s.head for s in steps[:-3]] == [0] * (len(steps) - 3)


def test_selected_head_leads_and_the_others_follow():
    steps = steps_for(starter_trace(), head=1)
    assert all(s.head == 1 for s in steps if s.stage in PIPELINE and not s.key.startswith("head"))
    assert [s.key for s in steps if s.key.startswith("head_")] == ["head_0"]


def test_many_heads_get_one_summary_step():
    trace = direct_trace(heads=6, w_o=True)
    keys = [s.key for s in steps_for(trace)]
    assert keys[-3:] == ["heads", "concat", "output"]
    table = steps_for(trace)[-3].plain()
    for k in range(6):
        row = trace.stage("weights", k)[default_focus(trace, 0)[0]]
        assert format_number(row.max()) in table


def test_direct_mode_several_heads_without_w_o_ends_at_concat():
    steps = steps_for(direct_trace(heads=2))
    assert [s.stage for s in steps][-2:] == ["weights", "concat"]


def test_default_focus_is_an_informative_query_and_its_favourite_key():
    trace = starter_trace()  # causal: the last token is the one row the mask never changes
    i, j = default_focus(trace, 0)
    allowed = trace["mask"][i]
    assert 0 < allowed.sum() < trace.n_keys and allowed.sum() >= 2  # the mask changes its row
    visible = trace.stage("weights", 0)[i][allowed]
    assert visible.max() - visible.min() >= 0.05  # not near-uniform
    assert i != trace.n_queries - 1
    assert j == int(np.argmax(trace.stage("weights", 0)[i]))
    first = steps_for(trace)[0].plain()
    assert f"We follow “{trace.tokens[i]}”: the mask hides" in first
    scores = next(s for s in steps_for(trace) if s.key == "scores")
    assert scores.cells == ((i, j),)
    assert [name for name, _ in scores.related] == ["Q", "K"]


def test_given_focus_is_followed_and_cells_fit_their_stage():
    trace = starter_trace()
    steps = steps_for(trace, 2, 1)
    assert next(s for s in steps if s.key == "scores").cells == ((2, 1),)
    assert next(s for s in steps if s.key == "K").cells[0] == (1, 0)
    for step in steps:
        if step.stage is None:
            continue
        rows, cols = trace.stage(step.stage, step.head).shape
        assert all(0 <= r < rows and 0 <= c < cols for r, c in step.cells), step.key


def test_out_of_range_focus_falls_back_to_the_default():
    trace = starter_trace()
    steps = steps_for(trace, 99, -1)
    assert next(s for s in steps if s.key == "scores").cells == (default_focus(trace, 0),)


def test_softmax_row_is_worked_step_by_step_with_trace_numbers():
    trace = starter_trace()
    i, j = default_focus(trace, 0)
    step = next(s for s in steps_for(trace) if s.key == "weights")
    text = step.plain()
    worked = explain(trace, "weights", 0, i, j).steps
    assert f"largest score in the row: {format_number(worked[0].result)}" in text
    assert f"sum = {format_number(worked[2].result)}" in text
    for c, weight in enumerate(trace.stage("weights", 0)[i]):
        assert format_number(weight) in text
        assert trace.kv_tokens[c] in text
    assert "exp(" in text and "Subtract" in text and "Divide" in text
    assert step.cells[0] == (i, j) and len(step.cells) == trace.n_keys


def test_scale_mask_and_normalizer_are_named():
    trace = projection_trace(heads=2, d_model=8, mask="causal", temperature=2.0)
    steps = {s.key: s.plain() for s in steps_for(trace, 1, 0)}
    assert "1/sqrt(4)" in steps["scale"] and "temperature 2" in steps["scale"]
    assert "causal" in steps["mask"]
    assert "For “cat” it hides “sat”: “sat” comes after “cat”." in steps["mask"]
    assert "Softmax" in steps["weights"]
    assert "No mask" not in steps["mask"]
    assert "no mask" in steps_for(direct_trace())[5].plain()


def test_every_number_comes_from_the_trace_starter():
    trace = starter_trace()
    assert_numbers_from_trace(trace, steps_for(trace))
    assert_numbers_from_trace(trace, steps_for(trace, 1, 0, head=1))


@pytest.mark.parametrize(
    "trace",
    [
        pytest.param(direct_trace(), id="direct"),
        pytest.param(projection_trace(), id="sinusoidal"),
        pytest.param(projection_trace(positional="learned", mask="causal"), id="learned"),
        pytest.param(direct_trace(mask="padding", padded_keys=(1,)), id="padding"),
        pytest.param(direct_trace(normalizer="sparsemax", heads=2, w_o=True), id="sparsemax"),
        pytest.param(direct_trace(normalizer="sigmoid"), id="sigmoid"),
        pytest.param(direct_trace(heads=6, w_o=True, kv_heads=2), id="gqa"),
        pytest.param(direct_trace(scale="custom", scale_factor=0.3), id="custom-scale"),
    ],
)
def test_every_number_comes_from_the_trace(trace):
    steps = steps_for(trace)
    assert steps
    assert_numbers_from_trace(trace, steps)
    for step in steps:
        assert "nan" not in step.plain().lower() and "undefined" not in step.plain()


def focus_changed(trace_before, trace_after, focus):
    before = {s.key: s.plain() for s in steps_for(trace_before, *focus)}
    after = {s.key: s.plain() for s in steps_for(trace_after, *focus)}
    assert before.keys() == after.keys()
    return [key for key in before if before[key] == after[key]]


def test_changing_a_cell_changes_every_step_projection():
    data = starter_session()
    trace = compute(data.inputs, data.config, tokens=data.tokens)
    i, j = 3, 1
    X = data.inputs.X.copy()
    X[i, 0] += 1.0
    X[j, 0] += 1.0
    edited = compute(data.inputs.with_array("X", X), data.config, tokens=data.tokens)
    assert focus_changed(trace, edited, (i, j)) == []


def test_changing_a_cell_changes_every_step_direct():
    trace = direct_trace(heads=2, w_o=True, mask="causal")
    i, j = 2, 0
    inputs = trace.inputs
    Q, K, V = inputs.Q.copy(), inputs.K.copy(), inputs.V.copy()
    Q[:, i, 0] += 1.5
    K[:, j, 0] += 1.5
    V[:, j, 0] += 1.5
    edited = compute(inputs.with_changes(Q=Q, K=K, V=V), trace.config, tokens=trace.tokens)
    assert focus_changed(trace, edited, (i, j)) == []


def test_fully_masked_row_is_narrated_as_zeros():
    custom = ((False, False, False), (True, False, False), (True, True, True))
    trace = direct_trace(mask="custom", custom_mask=custom)
    assert trace.fully_masked_rows == (0,)
    steps = {s.key: s for s in steps_for(trace, 0, 1)}
    weights = steps["weights"].plain()
    assert "fully masked" in steps["weights"].title
    assert "[0, 0, 0]" in weights and "nan" not in weights.lower()
    assert "all zeros" in steps["weighted_sum"].plain()
    assert "[0, 0]" in steps["weighted_sum"].plain()
    assert "“I”" in steps["mask"].plain() and "all 0" in steps["mask"].plain()
    # By default the walkthrough follows a query that can see something.
    assert default_focus(trace, 0)[0] == 2
    assert_numbers_from_trace(trace, list(steps.values()))


def test_about_step_shows_description_and_notes():
    trace = starter_trace()
    steps = steps_for(
        trace,
        name="Pizza",
        description="A tiny sentence.",
        notes=(
            ("Rounding", "The tutorial rounds <to> two places."),
            ("Head 0 is off.", "By 0.01."),
        ),
    )
    about = steps[0]
    assert "<b>Rounding</b>: The" in about.text  # a colon after a bare title
    assert "<b>Head 0 is off.</b> By" in about.text  # none after a sentence
    assert about.key == "about" and about.stage is None and about.cells == ()
    assert "Pizza" in about.title
    assert "A tiny sentence." in about.plain() and "Rounding" in about.plain()
    assert "&lt;to&gt;" in about.text  # the author's text is escaped, not markup
    assert steps_for(trace)[0].key == "embeddings"


def test_tokens_are_escaped():
    data = starter_session().with_changes(tokens=("<pad>", "a&b", "x", "y"))
    trace = compute(data.inputs, data.config, tokens=data.tokens)
    text = "".join(s.text for s in steps_for(trace))
    assert "<pad>" not in text and "&lt;pad&gt;" in text


def test_walkstep_is_frozen():
    step = steps_for(starter_trace())[0]
    assert isinstance(step, WalkStep)
    with pytest.raises(AttributeError):
        step.title = "x"  # type: ignore[misc]


@settings(max_examples=15, deadline=None)
@given(
    heads=st.sampled_from([1, 2, 3]),
    n=st.integers(1, 4),
    mask=st.sampled_from(["none", "causal"]),
    seed=st.integers(0, 1000),
    w_o=st.booleans(),
)
def test_numbers_come_from_the_trace_for_random_sessions(heads, n, mask, seed, w_o):
    trace = direct_trace(heads=heads, n=n, mask=mask, seed=seed, w_o=w_o)
    steps = steps_for(trace)
    expected = PIPELINE + (["weights"] * (heads - 1) + ["concat"] if heads > 1 else [])
    assert [s.stage for s in steps] == expected + (["output"] if w_o else [])
    assert_numbers_from_trace(trace, steps)


def test_the_mask_step_names_a_few_hidden_keys_and_counts_the_rest():
    from attention_explorer.engine import compute as compute_trace
    from attention_explorer.session import resize as resize_module, starter_session as starter
    from attention_explorer.walkthrough import steps_for as steps
    from attention_explorer.walkthrough.attention import MAX_NAMED_KEYS

    data = resize_module.set_token_count(starter(), 40)  # causal: row 0 hides 39 keys
    trace = compute_trace(data.inputs, data.config, tokens=data.tokens)
    mask_step = next(s for s in steps(trace, 0, 0) if s.key == "mask")
    assert f"and {39 - MAX_NAMED_KEYS} more" in mask_step.text
    assert len(mask_step.cells) <= MAX_NAMED_KEYS + 1


def test_every_step_names_the_query_and_key_the_views_frame():
    trace = starter_trace()
    for step in steps_for(trace):
        if step.stage is None or step.key.startswith("head_"):
            continue
        i, j = step.selection
        text = step.plain()
        assert f"“{trace.tokens[i]}”" in text, step.key
        if step.key in ("Q", "K", "V", "scores", "scale", "weights"):
            assert f"“{trace.kv_tokens[j]}”" in text, step.key
