"""'Open this step's layer' on the cache era's families: a gpt-oss step (each head's sink
logit in its softmax, a sliding layer) and a DeepSeek-V3 step (latent attention: K and V the
heads' up-projections of the cached latent) open as sessions whose weights are the step's
rows to 1e-9, under the full cache and a sinks + window policy. Each runs once its family's
generation has landed (helpers B and C)."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.generation.step_session import step_session
from tests.generation.conftest import PROMPT

POLICIES = [None, {"sinks": 1, "window": 3}]


def assert_every_step_reproduces(folder, policy) -> None:
    gen = ae.generate(folder, PROMPT, 3, dtype="float64", cache_policy=policy)
    for i, step in enumerate(gen.steps):
        for layer in range(len(gen.cache)):
            data = step_session(folder, gen, i, layer)
            weights = ae.compute(data, dtype="float64")["weights"][:, 0]  # [heads, m]
            np.testing.assert_allclose(weights, step.attentions[layer], atol=1e-9, rtol=0)
    return data


@pytest.fixture(scope="module")
def oss_folder(tmp_path_factory):
    make = pytest.importorskip("tests.models.test_gpt_oss").make_gpt_oss
    return make(tmp_path_factory.mktemp("oss-step"))


@pytest.mark.parametrize("policy", POLICIES)
def test_a_gpt_oss_step_opens_with_its_sinks(oss_folder, policy):
    data = assert_every_step_reproduces(oss_folder, policy)
    assert data.config.attention_sinks and data.inputs.sinks.shape == (data.config.heads,)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_deepseek_step_opens_with_the_up_projected_cache(deepseek_gen, policy):
    assert_every_step_reproduces(deepseek_gen, policy)
