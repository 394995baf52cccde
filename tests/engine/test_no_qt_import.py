"""The engine imports no Qt, no plotting library and no torch unless torch is asked for."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "superqt", "torch")

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import attention_explorer.engine as engine

    rng = np.random.default_rng(0)
    inputs = engine.AttentionInputs(
        X=rng.normal(size=(3, 4)), W_Q=rng.normal(size=(4, 4)), W_K=rng.normal(size=(4, 4)),
        W_V=rng.normal(size=(4, 4)), W_O=rng.normal(size=(4, 4)),
    )
    config = engine.AttentionConfig(mode="projection", heads=2, d_model=4, mask="causal")
    trace = engine.compute(inputs, config)
    engine.explain(trace, "weights", 1, 2, 0).text()
    engine.torch_installed()
    print(json.dumps({"modules": sorted(sys.modules), "shape": list(trace["output"].shape)}))
    """
)


def run_script(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; return the JSON it prints last."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def offenders(modules: list[str], names=FORBIDDEN) -> list[str]:
    """The modules that are, or are inside, one of ``names``."""
    return [m for m in modules if m.split(".")[0] in names]


def test_engine_import_and_compute_load_no_qt_and_no_torch():
    result = run_script(SCRIPT)
    assert result["shape"] == [3, 4]
    assert "attention_explorer.engine" in result["modules"]
    assert offenders(result["modules"]) == []


def test_the_check_itself_sees_torch_when_it_is_used():
    """The torch backend does import torch: the check above would notice a stray import."""
    code = SCRIPT.replace(
        "trace = engine.compute(inputs, config)",
        "trace = engine.compute(inputs, config, engine.Backend('torch'))",
    )
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    result = run_script(code)
    assert "torch" in offenders(result["modules"])
    assert offenders(result["modules"], ("PySide6", "shiboken6", "pyqtgraph", "superqt")) == []
