"""Issue 32, item 5: tokenizers that run away. A tokenizer.json whose regexes or replacements
could run without bound encodes in a worker process with a time and memory budget; a Rust
panic (``PanicException``, a BaseException) is one clear line everywhere; a normal
tokenizer still encodes in this process. Issue 31, item 15: type ids beyond the model's."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from hostile_files import word_tokenizer

import attention_explorer as ae
from attention_explorer.pretrained import ModelError, load_model
from attention_explorer.pretrained.checkpoint.tokenize import load_tokenizer

#: Patched by name: other test modules may import the package afresh.
BOUNDED = "attention_explorer.pretrained.checkpoint.tokenize_bounded"


def with_tokenizer(model, **parts):
    from tokenizers import Regex, normalizers, pre_tokenizers

    made = {}
    if "split" in parts:
        behavior = parts.get("behavior", "isolated")
        made["pre_tokenizer"] = pre_tokenizers.Split(Regex(parts["split"]), behavior=behavior)
    if "replace" in parts:
        made["normalizer"] = normalizers.Replace("a", parts["replace"])
    word_tokenizer(model / "tokenizer.json", **made)
    return model


def test_a_backtracking_regex_is_run_apart_and_refused_in_one_line(model):
    with_tokenizer(model, split="(a|aa)+$")
    assert "repeated group" in load_tokenizer(model).unbounded
    started = time.perf_counter()
    with pytest.raises(ModelError) as err:
        ae.model_run(model, "a" * 1000 + "b")
    assert time.perf_counter() - started < 25
    text = str(err.value)
    assert "tokenizer" in text and str(model / "tokenizer.json") in text and "\n" not in text


def test_a_slow_tokenizer_is_stopped_at_its_time_budget(model, monkeypatch):
    with_tokenizer(model, split=r"\w*\w*\w*\w*\W")  # polynomial: no group, still run apart
    monkeypatch.setattr(BOUNDED + ".TIME_BUDGET_S", 0.001)  # no worker starts this fast
    with pytest.raises(ModelError) as err:
        ae.from_model(model, "the cat")
    assert "took more than 0.001 s on this text and was stopped" in str(err.value)
    assert "is not one known to run in bounded time" in str(err.value)


def test_a_multiplying_normalizer_is_stopped_at_its_memory_budget(model, monkeypatch):
    with_tokenizer(model, replace="a" * 50_000)
    assert "50,000 times longer" in load_tokenizer(model).unbounded
    monkeypatch.setattr(BOUNDED + ".MEMORY_BUDGET", 256 << 20)
    with pytest.raises(ModelError) as err:
        ae.model_attention(model, "a" * 1000)
    assert "needed more than its" in str(err.value) and "was stopped" in str(err.value)


def test_a_bounded_tokenizer_apart_gives_the_same_tokens(model, monkeypatch):
    with_tokenizer(model, split=r"\s+", behavior="removed")  # harmless, not a known pattern
    tokenizer = load_tokenizer(model)
    assert tokenizer.unbounded and "not one known" in tokenizer.unbounded
    apart = tokenizer.encode("the cat sat")
    assert apart.ids == tokenizer.inner.encode("the cat sat").ids
    assert ae.from_model(model, "the cat sat").tokens == ("the", "cat", "sat")


@pytest.mark.parametrize("name", ["tiny", "all-MiniLM-L6-v2", "tiny-induction"])
def test_a_normal_tokenizer_encodes_in_this_process(model, monkeypatch, name):
    folder = model if name == "tiny" else name
    try:
        loaded = load_model(folder)
    except ModelError:
        pytest.skip(f"{name} is not installed")
    assert loaded.tokenizer.unbounded is None

    def no_worker(*_a, **_k):
        raise AssertionError("a worker process was started for a normal tokenizer")

    monkeypatch.setattr(subprocess, "run", no_worker)
    assert ae.model_run(loaded, "the cat sat").attentions.shape[-1] >= 3


class PanicException(BaseException):
    """Stands for pyo3_runtime.PanicException (a BaseException, matched by name)."""


def test_a_panic_is_one_line_everywhere(model, monkeypatch, capsys):
    loaded = load_model(model)

    def panic(*_a, **_k):
        raise PanicException("Onig: Regex search error: retry-limit-in-match over")

    monkeypatch.setattr(loaded.tokenizer, "inner", type("T", (), {"encode": panic})())
    with pytest.raises(ModelError) as err:
        ae.model_run(loaded, "the cat on the mat")
    assert "retry-limit-in-match over" in str(err.value)
    from attention_explorer.cli import main

    monkeypatch.setattr(type(loaded.tokenizer), "encode", lambda self, *a, **k: panic())
    code = main(["model", "--model", str(model), "--text", "a dog sat"])
    err_text = capsys.readouterr().err
    assert code != 0 and "retry-limit-in-match over" in err_text
    assert "Traceback" not in err_text and len(err_text.strip().splitlines()) == 1


def test_the_model_panel_reports_a_panic(model, monkeypatch, qtbot):
    from attention_explorer.ui.model.model_loader import ModelLoader

    loaded = load_model(model)

    def panic(self, *_a, **_k):
        raise PanicException("boom")

    monkeypatch.setattr(type(loaded.tokenizer), "encode", panic)
    loader = ModelLoader()
    failed, busy = [], []
    loader.failed.connect(failed.append)
    loader.busy.connect(busy.append)
    with qtbot.waitSignal(loader.failed, timeout=10000):
        loader.load_overview(str(model), "the dog on the mat")
    qtbot.waitUntil(lambda: busy and busy[-1] is False, timeout=5000)
    assert "boom" in failed[0] and "\n" not in failed[0]


def test_type_ids_beyond_the_type_vocabulary_are_one_line(model):
    from tokenizers import processors

    from attention_explorer.pretrained.checkpoint.tokenize import tokenize

    word_tokenizer(model / "tokenizer.json")
    raw = json.loads((model / "tokenizer.json").read_text())
    raw["post_processor"] = json.loads(processors.TemplateProcessing(single="$A:5").__getstate__())
    (model / "tokenizer.json").write_text(json.dumps(raw))
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "type_vocab_size": 2}))
    with pytest.raises(ModelError) as err:
        tokenize(load_tokenizer(model), "the cat", 16)
    assert "type id 5, beyond the 2 token types of config.json's type_vocab_size" in str(err.value)


@pytest.mark.parametrize("where", ["loader", "runner"])
def test_the_window_workers_report_a_panic_raised_anywhere(model, monkeypatch, qtbot, where):
    from attention_explorer.ui.model import model_loader, model_runner

    def panic(*_a, **_k):
        raise PanicException("deep inside")

    if where == "loader":
        monkeypatch.setattr(model_loader, "model_attention", panic)
        worker = model_loader.ModelLoader()
        start = lambda: worker.load_overview(str(model), "the cat")  # noqa: E731
    else:
        monkeypatch.setattr(model_runner, "model_run", panic)
        worker = model_runner.ModelRunner()
        worker.set_model(load_model(model), "the cat")
        start = lambda: worker.request({})  # noqa: E731
    busy = []
    worker.busy.connect(busy.append)
    with qtbot.waitSignal(worker.failed, timeout=10000) as blocker:
        start()
    assert "a Rust panic" in blocker.args[0] and "deep inside" in blocker.args[0]
    qtbot.waitUntil(lambda: busy and busy[-1] is False, timeout=5000)
