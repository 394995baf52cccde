"""Fixtures for the export tests: small traces, and a QApplication made by pytest-qt first.

pytest-qt's ``qapp`` is requested for every test so that the export module reuses it (as in the
GUI) instead of creating a bare QGuiApplication that later widget tests could not use.
"""

from pathlib import Path

import numpy as np
import pytest

from attention_explorer.engine import AttentionConfig, AttentionInputs, compute

SAMPLE = Path(__file__).parents[1] / "sample_session.json"


@pytest.fixture(autouse=True)
def _qt_application(qapp):
    return qapp


def make_trace(heads=1, n=3, d=2, mask="none", tokens=None, seed=0, w_o=True):
    """A direct-mode trace with random Q, K, V (and W_O)."""
    rng = np.random.default_rng(seed)
    config = AttentionConfig(mode="direct", heads=heads, d_model=heads * d, mask=mask)
    inputs = AttentionInputs(
        Q=rng.normal(size=(heads, n, d)),
        K=rng.normal(size=(heads, n, d)),
        V=rng.normal(size=(heads, n, d)),
        W_O=rng.normal(size=(heads * d, heads * d)) if w_o else None,
    )
    return compute(inputs, config, tokens=tokens)


@pytest.fixture
def trace_factory():
    """:func:`make_trace`, for tests that need their own sizes or masks."""
    return make_trace


@pytest.fixture
def pizza():
    """The sample session: I love pizza, one head, causal mask."""
    from attention_explorer.session import load_session

    data = load_session(SAMPLE)
    return compute(data.inputs, data.config, tokens=data.tokens)


@pytest.fixture
def four_heads():
    """Four heads over six named tokens with a causal mask and an output projection."""
    return make_trace(
        heads=4, n=6, d=3, mask="causal", tokens=["The", "cat", "sat", "on", "the", "mat"]
    )
