"""Hypothesis fuzzes every value of a model's config.json (issue 21): each mutated folder
either runs (finite attentions) or is refused in one line that names the config key, never a
traceback from numpy, a ZeroDivisionError or a hang."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from attention_explorer.pretrained import ModelError, model_run

#: Values a hostile or broken config.json may hold in place of a number, string or flag.
ODD_VALUES = st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 2, 3, 1e9, 1e308, "", "gelu", "relu", "x", None, True, False]),
    st.lists(st.integers(0, 4), max_size=3),
    st.dictionaries(st.sampled_from(["type", "factor"]), st.integers(0, 3), max_size=2),
)


@pytest.fixture(scope="module")
def base_config(gpt2_folder) -> dict:
    return json.loads((gpt2_folder / "config.json").read_text())


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_config_value_runs_or_is_refused_in_one_line(
    gpt2_folder, base_config, tmp_path_factory, data
):
    key = data.draw(st.sampled_from(sorted(base_config)), label="key")
    value = data.draw(ODD_VALUES, label="value")
    folder = tmp_path_factory.mktemp("fuzzed")
    for name in ("model.safetensors", "tokenizer.json"):
        shutil.copy(gpt2_folder / name, folder / name)
    config = dict(base_config, **{key: value})
    text = json.dumps(config, allow_nan=True)
    (folder / "config.json").write_text(text)
    try:
        run = model_run(folder, "the cat sat", dtype="float64")
    except ModelError as exc:
        message = str(exc)
        assert "\n" not in message and message.strip(), message
        assert "Traceback" not in message
        return
    assert np.isfinite(run.attentions).all(), (key, value)
    if run.logits is not None:
        assert np.isfinite(run.logits).all(), (key, value)
    assert math.isfinite(float(run.hidden.sum()))


def test_a_null_size_is_read_as_missing(gpt2_folder, base_config, tmp_path):
    """``"n_positions": null`` once reached the tokenizer as None and raised a TypeError (found
    by the fuzz test above): a null size is the family's default, here checked against the
    position table's shape."""
    for name in ("model.safetensors", "tokenizer.json"):
        shutil.copy(gpt2_folder / name, tmp_path / name)
    (tmp_path / "config.json").write_text(json.dumps(dict(base_config, n_positions=None)))
    with pytest.raises(ModelError, match="wpe.* has shape .*expected \\[1024"):
        model_run(tmp_path, "the cat sat", dtype="float64")
