"""The public Python API: ``import attention_explorer as ae`` and every function it offers."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.engine import AttentionInputError, Trace
from attention_explorer.session import Session, SessionFileError


@pytest.fixture(autouse=True)
def _qt_application(qapp):
    """Pictures reuse pytest-qt's QApplication rather than making a bare QGuiApplication."""
    return qapp


def _python(code: str) -> str:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_import_is_light_and_qt_free():
    heavy = "('PySide6', 'numpy', 'attention_explorer.api')"
    out = _python(
        f"import sys, attention_explorer as ae; print([m for m in {heavy} if m in sys.modules])"
    )
    assert out == "[]"
    assert set(ae.API) <= set(dir(ae))


def test_the_export_function_and_the_exporting_package_are_apart(tmp_path):
    code = (
        "import attention_explorer.exporting as ex, attention_explorer.pretrained as pre, "
        "attention_explorer as ae; t = ae.compute(ae.example('three-tokens')); "
        "print(ae.export is not ex, ae.models is not pre, callable(ae.models), "
        f"ae.export(t, r'{tmp_path / 'w.csv'}', head=0).name)"
    )
    assert _python(code) == "True True True w.csv"


def test_save_then_load_gives_the_same_session(tmp_path):
    data = ae.example("starter")
    path = ae.save(data, tmp_path / "s.json")
    again = ae.load(path)
    assert again.tokens == data.tokens and again.config == data.config
    np.testing.assert_array_equal(again.inputs.X, data.inputs.X)
    assert json.loads(path.read_text())["format"] == "attention-explorer-session"


def test_load_refuses_a_bad_file_by_name(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "attention-explorer-session", "version": 9}')
    with pytest.raises(SessionFileError, match="version"):
        ae.load(bad)


def test_examples_start_with_the_starter_and_each_loads():
    infos = ae.examples()
    assert infos[0].key == "starter"
    keys = [info.key for info in infos]
    assert len(keys) == len(set(keys)) and "i-love-pizza" in keys
    assert ae.example("i-love-pizza").tokens == ("I", "love", "pizza")


def test_unknown_example_lists_the_known_ones():
    with pytest.raises(KeyError, match="known examples: starter, "):
        ae.example("nope")


def test_compute_gives_numpy_stages():
    trace = ae.compute(ae.example("starter"))
    assert isinstance(trace, Trace)
    assert isinstance(trace["weights"], np.ndarray) and trace["weights"].shape == (2, 4, 4)
    np.testing.assert_allclose(trace["weights"].sum(axis=-1), 1.0, rtol=1e-6)
    assert trace.backend.label == "numpy" and trace.dtype == "float32"


def test_compute_takes_an_evented_session_and_options():
    session = Session.from_data(ae.example("starter"))
    trace = ae.compute(session, dtype="float64", heads=[1], stages=["weights"])
    assert trace.heads == (1,) and trace["weights"].dtype == np.float64
    assert not trace.has("Q")


def test_compute_refuses_a_device_for_numpy():
    with pytest.raises(AttentionInputError, match="needs the torch backend"):
        ae.compute(ae.example("starter"), device="cuda")


def test_resize_returns_a_new_session_and_keeps_the_old():
    old = ae.example("starter")  # 4 tokens, 2 heads, d_model 8
    new = ae.resize(old, tokens=6, heads=4, d_model=16)
    assert len(old.tokens) == 4 and old.config.heads == 2
    assert len(new.tokens) == 6 and new.config.heads == 4 and new.config.d_model == 16
    np.testing.assert_array_equal(new.inputs.X[:4, :8], old.inputs.X)  # what fits is kept
    assert ae.compute(new)["weights"].shape == (4, 6, 6)


def test_resize_d_k_and_kv_heads():
    new = ae.resize(ae.example("starter"), heads=4, kv_heads=2, d_k=3)
    assert new.config.n_kv_heads == 2 and new.config.head_dim == 3
    trace = ae.compute(new)
    assert trace["Q"].shape == (4, 4, 3)
    np.testing.assert_array_equal(trace["K"][0], trace["K"][1])  # heads 0 and 1 share a key head
    with pytest.raises(AttentionInputError, match="kv_heads"):
        ae.resize(new, kv_heads=3)


def test_explain_reads_the_arithmetic():
    trace = ae.compute(ae.example("i-love-pizza"))
    text = ae.explain(trace, "weights", 0, 2, 1).text()
    assert "weights[pizza, love]" in text and "0.1173" in text
    with pytest.raises(KeyError, match="not part of this trace"):
        ae.explain(ae.compute(ae.example("three-tokens"), stages=["weights"]), "Q", 0, 0, 0)
    with pytest.raises(KeyError, match="head 5"):
        ae.explain(trace, "weights", 5, 0, 0)


def test_export_numbers_whole_trace_and_pictures(tmp_path):
    trace = ae.compute(ae.example("starter"))
    csv = ae.export(trace, tmp_path / "w.csv", stage="weights", head=1)
    rows = csv.read_text().splitlines()
    assert len(rows) == 5  # a header row and four query rows
    with np.load(ae.export(trace, tmp_path / "t.npz"), allow_pickle=False) as npz:
        np.testing.assert_allclose(npz["weights"], trace["weights"])
    png = ae.export(trace, tmp_path / "w.png", stage="weights", head=0, size=(320, 240))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    grid = ae.export(trace, tmp_path / "grid.svg", stage="scores", head="all")
    assert "<svg" in grid.read_text()


def test_show_opens_the_window_on_the_session(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings

    from attention_explorer.ui.window import main_window

    ini = str(tmp_path / "s.ini")
    monkeypatch.setattr(
        main_window, "QSettings", lambda: QSettings(ini, QSettings.Format.IniFormat)
    )
    data = ae.example("i-love-pizza")
    window = ae.show(data, block=False)
    qtbot.addWidget(window)
    try:
        assert window.isVisible()
        assert window.session.tokens == ("I", "love", "pizza")
        qtbot.waitUntil(lambda: window.live.trace is not None and window.live.trace.n_queries == 3)
    finally:
        window.history.mark_clean()
        window.live.shutdown()
        window.close()


def test_compute_can_keep_a_long_sequence_at_display_resolution():
    s = ae.resize(ae.example("starter"), tokens=40)
    full, previewed = ae.compute(s), ae.compute(s, preview=16)
    assert previewed.preview("weights").image.shape == (2, 14, 14)  # 40 rows in blocks of 3
    assert full.preview("weights") is None
    np.testing.assert_allclose(
        previewed.stage("weights", 1)[7], full.stage("weights", 1)[7], rtol=1e-5, atol=1e-7
    )
