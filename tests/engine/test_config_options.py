"""Options and derived rules decided once: every option has a label, the schema and the
controls read the same lists, grouped-query attention's group is one property, resize refuses
with the config's own message, and the budget counts the stages the trace really keeps."""

from __future__ import annotations

from typing import get_args

import msgspec
import numpy as np
import pytest

from attention_explorer.engine import (
    AttentionConfig,
    AttentionInputError,
    AttentionInputs,
    compute as compute_trace,
    config as config_module,
)
from attention_explorer.engine.budget import SQUARE_STAGES_KEPT, trace_bytes
from attention_explorer.engine.config import CHOICES, OPTIONS
from attention_explorer.engine.head_inputs import kv_heads
from attention_explorer.engine.trace import SQUARE_STAGES
from attention_explorer.session import resize, starter_session
from attention_explorer.session.schema import ConfigFields


def test_every_option_of_every_choice_has_a_label():
    assert set(OPTIONS) == set(CHOICES)
    for setting, alias in CHOICES.items():
        values = get_args(alias)
        assert tuple(OPTIONS[setting]) == values, setting  # same options, same order
        for value in values:
            label = OPTIONS[setting][value]
            assert label.strip() and label != setting, (setting, value)
            assert config_module.option_label(setting, value) == label
        default = getattr(AttentionConfig(), setting)
        assert default in values


@pytest.mark.parametrize("setting", sorted(CHOICES))
def test_the_session_format_takes_exactly_the_configs_options(setting):
    for value in OPTIONS[setting]:
        assert getattr(msgspec.convert({setting: value}, ConfigFields), setting) == value
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({setting: "no-such-option"}, ConfigFields)


@pytest.mark.parametrize(
    "heads, kv, expected", [(8, None, list(range(8))), (8, 2, [0] * 4 + [1] * 4), (6, 1, [0] * 6)]
)
def test_kv_head_of_every_query_head(heads, kv, expected):
    config = AttentionConfig(heads=heads, kv_heads=kv)
    assert [config.kv_head_of(h) for h in range(heads)] == expected
    assert kv_heads(config, range(heads)) == expected
    assert config.kv_group == heads // (kv or heads)
    assert config.grouped == (config.kv_group > 1)


def test_resize_refuses_with_the_configs_own_message():
    data = starter_session()  # d_model 8, 2 heads, projection
    with pytest.raises(AttentionInputError) as by_resize:
        resize.set_heads(data, 3)
    with pytest.raises(AttentionInputError) as by_config:
        data.config.with_changes(heads=3).validate()
    assert by_resize.value.message == by_config.value.message
    assert "d_model 6 or 9" in by_config.value.message  # both ways out, in one message
    with pytest.raises(AttentionInputError) as by_width:
        resize.set_d_model(data, 9)
    assert "d_model 9 is not divisible by 2 heads" in by_width.value.message
    four = resize.set_heads(data, 4)
    with pytest.raises(AttentionInputError) as by_kv:
        resize.set_kv_heads(four, 3)
    with pytest.raises(AttentionInputError) as kv_config:
        four.config.with_changes(kv_heads=3).validate()
    assert by_kv.value.message == kv_config.value.message


def test_the_budget_counts_every_square_stage_the_trace_keeps():
    assert SQUARE_STAGES_KEPT == len(SQUARE_STAGES) - 1 == 4  # all but the capped scores
    rng = np.random.default_rng(0)
    heads, n = 3, 16
    config = AttentionConfig(mode="direct", heads=heads, d_model=6)
    q = rng.normal(size=(heads, n, 2))
    trace = compute_trace(AttentionInputs(Q=q, K=q, V=q), config, dtype="float32")
    kept = sum(np.asarray(trace[s]).nbytes for s in SQUARE_STAGES if trace.has(s))  # [h, n, n]
    estimated = trace_bytes(config, n, n, heads, "float32") - trace_bytes(config, n, n, 0)
    assert estimated == kept
