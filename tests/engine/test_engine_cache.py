"""No hidden state in the engine: compute() without a cache is pure, a cache is the caller's.

The engine's reusable state (the last mask, its previews, the stage pool) lives in an
:class:`EngineCache` the caller owns and passes in; nothing mutable lives at module level.
"""

from __future__ import annotations

import ast
import collections
import functools
import importlib
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import attention_explorer.engine as engine_package
from attention_explorer.engine import AttentionConfig, AttentionInputs, compute
from attention_explorer.engine.cache import EngineCache
from attention_explorer.engine.mask import allowed_mask

#: Module-level containers allowed for now, with the reason. engine/explain.py belongs to the
#: stage-catalogue work (issue 17, item 1), which derives its builders from the catalogue.
ALLOWED = {("explain", "_BUILDERS")}

MUTABLE = (dict, list, set, bytearray, collections.deque, np.ndarray)


def _engine_modules():
    yield "__init__", engine_package
    for info in pkgutil.iter_modules(engine_package.__path__):
        yield info.name, importlib.import_module(f"attention_explorer.engine.{info.name}")


def _assigned_at_module_level(path: Path) -> set[str]:
    """Names a file assigns at its top level (imports excluded)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {name for name in names if not name.startswith("__")}  # __all__ is read-only use


def test_no_module_level_mutable_state_in_the_engine():
    found = []
    for name, module in _engine_modules():
        for attr in _assigned_at_module_level(Path(module.__file__)):
            value = getattr(module, attr)
            if isinstance(value, MUTABLE) and (name, attr) not in ALLOWED:
                found.append(f"{name}.{attr} ({type(value).__name__})")
        for attr, value in vars(module).items():  # memoised functions keep state too
            if (
                isinstance(value, functools._lru_cache_wrapper)
                and value.__module__ == module.__name__
            ):
                found.append(f"{name}.{attr} (lru_cache)")
    assert not found, f"module-level mutable state in engine/: {found}"


def test_no_engine_function_rebinds_a_module_global():
    for name, module in _engine_modules():
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        rebinding = [n.names for n in ast.walk(tree) if isinstance(n, (ast.Global, ast.Nonlocal))]
        assert not rebinding, f"engine/{name}.py rebinds {rebinding}"


def test_the_scan_sees_what_it_looks_for(tmp_path):
    """The scan above goes red on the state the engine used to keep (a module dict)."""
    source = tmp_path / "stateful.py"
    source.write_text("_remembered: dict = {}\n_last = None\n", encoding="utf-8")
    assert _assigned_at_module_level(source) == {"_remembered", "_last"}


def _case(n=40, heads=2, mask="causal"):
    rng = np.random.default_rng(3)
    d = 8
    config = AttentionConfig(mode="projection", heads=heads, d_model=d, mask=mask)
    inputs = AttentionInputs(
        X=rng.normal(size=(n, d)),  # [n, d_model]
        W_Q=rng.normal(size=(d, d)),  # [d_model, h*d_k]
        W_K=rng.normal(size=(d, d)),
        W_V=rng.normal(size=(d, d)),
        W_O=rng.normal(size=(d, d)),  # [h*d_v, d_model]
    )
    return config, inputs


def _arrays(trace):
    return {name: np.asarray(value) for name, value in trace.stages.items() if value is not None}


@pytest.mark.parametrize("preview", [None, 16])
def test_compute_without_a_cache_is_pure(preview):
    config, inputs = _case()
    before = {k: np.array(v, copy=True) for k, v in vars(inputs).items() if v is not None}
    first, second = (
        compute(inputs, config, preview=preview),
        compute(inputs, config, preview=preview),
    )
    one, two = _arrays(first), _arrays(second)
    assert one.keys() == two.keys() and "mask" in one
    for name in one:
        np.testing.assert_array_equal(one[name], two[name], err_msg=name)
        assert not np.shares_memory(one[name], two[name]), name  # nothing shared between calls
        for given in before:
            assert not np.shares_memory(one[name], getattr(inputs, given)), (name, given)
    for given, value in before.items():  # the inputs are untouched
        np.testing.assert_array_equal(getattr(inputs, given), value, err_msg=given)
    assert first["mask"] is not second["mask"]
    if preview is not None:
        assert first.preview("mask") is not second.preview("mask")


def test_a_cache_reuses_the_mask_and_its_preview_and_two_caches_share_nothing():
    config, inputs = _case()
    cache, other = EngineCache(), EngineCache()
    first = compute(inputs, config, preview=16, cache=cache)
    again = compute(inputs, config, preview=16, cache=cache)
    elsewhere = compute(inputs, config, preview=16, cache=other)
    assert again["mask"] is first["mask"] and not first["mask"].flags.writeable
    assert again.preview("mask") is first.preview("mask")
    assert elsewhere["mask"] is not first["mask"]  # another owner: its own mask
    np.testing.assert_array_equal(elsewhere["mask"], first["mask"])
    padded = AttentionConfig(
        mode="projection", heads=2, d_model=8, mask="padding", padded_keys=(1,)
    )
    assert compute(inputs, padded, cache=cache)["mask"] is not first["mask"]  # a new kind


def test_a_custom_mask_is_never_remembered():
    config = AttentionConfig(heads=1, d_model=4, mask="custom", custom_mask=((1, 0), (1, 1)))
    cache = EngineCache()
    first, second = allowed_mask(config, 2, 2, cache), allowed_mask(config, 2, 2, cache)
    assert first is not second and not first.flags.writeable
    np.testing.assert_array_equal(first, [[True, False], [True, True]])


def test_the_same_numbers_with_and_without_a_cache():
    config, inputs = _case(n=70, heads=4)
    cache = EngineCache()
    for preview in (None, 16):
        plain, cached = compute(inputs, config, preview=preview), None
        for _ in range(2):  # the second pass reuses the first's mask and memory
            cached = compute(inputs, config, preview=preview, cache=cache)
        for name, value in _arrays(plain).items():
            np.testing.assert_array_equal(np.asarray(cached[name]), value, err_msg=name)
