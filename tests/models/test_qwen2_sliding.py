"""Qwen2 with sliding windows (``use_sliding_window``, ``sliding_window``, ``max_window_layers``,
``layer_types``) against transformers' exact float64 reference: full layers before
``max_window_layers``, sliding ones from it on; the model run and model_attention on numpy and
torch, a knockout and an edit of the sliding layer, a layer opened by from_model, the
defaults Qwen2Config gives absent keys, and the refusals by name."""

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
    worst,
    write_model,
)

SLIDING = dict(use_sliding_window=True, sliding_window=5, max_window_layers=1)


@pytest.fixture(scope="module")
def qwen2(tmp_path_factory):
    """A random 2-layer Qwen2: layer 0 full, layer 1 sliding (window 5)."""
    folder = tmp_path_factory.mktemp("qwen2-sliding")
    return write_model(folder, "Qwen2Config", "Qwen2ForCausalLM", **SLIDING)


@pytest.fixture
def qwen2_copy(qwen2, tmp_path):
    folder = tmp_path / "qwen2"
    shutil.copytree(qwen2, folder)
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
def test_qwen2_sliding_matches_the_exact_reference(qwen2, backend):
    print(f"qwen2 sliding parity on {backend}: {check_parity(qwen2, backend):.1e}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_knockout_and_edit_of_the_sliding_layer_match_transformers(qwen2, tmp_path, backend):
    check_knockout(qwen2, tmp_path, layer=1, head=0, backend=backend)
    check_session_and_edit(qwen2, tmp_path, layer=1, backend=backend)


def test_only_the_layers_from_max_window_layers_slide(qwen2):
    run = model_run(qwen2, TEXT, dtype="float64")
    i, j = np.indices(run.attentions.shape[-2:])
    assert (run.attentions[1][:, i - j >= 5] == 0).all()
    assert (run.attentions[0][:, j <= i] > 0).all()
    w = run.model.weights
    assert [w.window_of(0), w.window_of(1)] == [None, 5]


def test_layer_types_in_config_json_say_which_layers_slide(qwen2_copy):
    rewrite_config(qwen2_copy, layer_types=["sliding_attention", "full_attention"])
    run = model_run(qwen2_copy, TEXT, dtype="float64")
    assert [run.model.weights.window_of(i) for i in range(2)] == [5, None]
    assert worst(run, run_reference(qwen2_copy, list(run.ids))) <= 1e-6


@pytest.mark.parametrize(
    ("changes", "windows"),
    [
        ({"sliding_window": None, "max_window_layers": None, "layer_types": None}, [None, None]),
        ({"max_window_layers": 0, "layer_types": None, "sliding_window": None}, [4096, 4096]),
        ({"use_sliding_window": False, "layer_types": None}, [None, None]),
    ],
    ids=["max-window-layers-28", "window-4096", "off"],
)
def test_absent_keys_take_qwen2configs_defaults(qwen2_copy, changes, windows):
    rewrite_config(qwen2_copy, **changes)
    run = model_run(qwen2_copy, TEXT, dtype="float64")
    assert [run.model.weights.window_of(i) for i in range(2)] == windows
    assert worst(run, run_reference(qwen2_copy, list(run.ids))) <= 1e-6


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        (
            {"use_sliding_window": False, "layer_types": ["full_attention", "sliding_attention"]},
            "layer 1 sliding_attention, but use_sliding_window is false",
        ),
        ({"use_sliding_window": "yes"}, "use_sliding_window to 'yes'"),
        ({"max_window_layers": -1}, "max_window_layers"),
        ({"sliding_window": 0}, "sliding_window"),
        ({"layer_types": ["full_attention", "chunked_attention"]}, "chunked_attention"),
        ({"layer_types": ["full_attention"] * 3}, "one type for each of its 2 layers"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(qwen2_copy, changes, named):
    rewrite_config(qwen2_copy, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(qwen2_copy, TEXT)
