"""Issue 32, item 4 (and issue 31's lone surrogate): every entry that reads a text runs the
same quick check before tokenizing: ``ae.model_run`` and ``ae.knockout_sweep`` refuse 10 MB
of text at once, as ``from_model`` and ``model_attention`` do; ``sweep --out`` checks its
output before any run."""

from __future__ import annotations

import time
import tracemalloc

import pytest

import attention_explorer as ae
from attention_explorer.cli import main
from attention_explorer.pretrained import ModelError, load_model

HUGE = "the cat " * 1_250_000  # 10 MB


@pytest.fixture
def no_tokenizing(monkeypatch):
    """Fail the test if any text is tokenized."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("the text was tokenized before its length was checked")

    where = "attention_explorer.pretrained.checkpoint."  # by name: the modules as imported now
    monkeypatch.setattr(where + "tokenize.tokenize", refuse)
    monkeypatch.setattr(where + "tokenize_bounded.BoundedTokenizer.encode", refuse)
    monkeypatch.setattr(where + "tokenize_bounded.encode_apart", refuse)


@pytest.mark.parametrize(
    "entry",
    [
        lambda m, t: ae.model_run(m, t),
        lambda m, t: ae.knockout_sweep(m, t),
        lambda m, t: ae.from_model(m, t),
        lambda m, t: ae.model_attention(m, t),
        lambda m, t: ae.model_run(load_model(m), t),
        lambda m, t: ae.knockout_sweep(load_model(m), t),
    ],
)
def test_every_entry_refuses_a_huge_text_at_once(model, entry, no_tokenizing):
    load_model(model)  # the model itself is not what costs
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(ModelError) as err:
            entry(model, HUGE)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.perf_counter() - started < 2.0 and peak < 16 << 20
    assert "10,000,000 characters, more than this model's 16 positions" in str(err.value)


@pytest.mark.parametrize(
    "entry",
    [
        lambda m, t: ae.model_run(m, t),
        lambda m, t: ae.knockout_sweep(m, t),
        lambda m, t: ae.from_model(m, t),
        lambda m, t: ae.model_attention(m, t),
    ],
)
def test_a_lone_surrogate_is_one_line(model, entry):
    with pytest.raises(ModelError) as err:
        entry(model, "the \ud800 cat")
    assert "lone surrogate (U+D800) at character 4" in str(err.value)


def test_sweep_checks_its_output_before_running(model, tmp_path, capsys, monkeypatch):
    from attention_explorer.pretrained import sweep

    ran = []
    monkeypatch.setattr(sweep, "model_run", lambda *a, **k: ran.append(1))
    (tmp_path / "taken.csv").mkdir()  # a folder under the output's name
    code = main(["sweep", str(model), "--text", "the cat", "--out", str(tmp_path / "taken.csv")])
    assert code != 0 and not ran
    assert "taken.csv" in capsys.readouterr().err


def test_sweep_refuses_a_huge_text_before_loading(model, tmp_path, capsys, no_tokenizing):
    code = main(["sweep", str(model), "--text", HUGE, "--out", str(tmp_path / "s.csv")])
    assert code != 0 and "more than this model's 16 positions" in capsys.readouterr().err
