"""Named hostile calls of the Python API: wrong types, unbounded sizes, saves the app could not
open again, and texts too long for the model. Each is refused at once, in one line that says
what was expected (or names the key), by exactly the documented exception, and writes nothing.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.engine import AttentionInputError
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.session import SessionFileError
from attention_explorer.session.argument_checks import ArgumentTypeError

#: A refusal is told before any real work: it allocates at most this many bytes (the 10 MB
#: texts of two cases included), where the work itself would take gigabytes.
MOST_BYTES = 48 * 2**20
S = ae.example("starter")
T = ae.compute(S)


def _nan_session():
    return S.with_changes(inputs=S.inputs.with_changes(W_Q=np.full_like(S.inputs.W_Q, np.nan)))


def _inf_session():
    x = np.array(S.inputs.X)
    x[2, 1] = np.inf
    return S.with_changes(inputs=S.inputs.with_changes(X=x))


def _save(session, name="s.json"):
    return lambda ctx: ae.save(session, ctx.tmp / name)


#: name -> (call(ctx), exception type, words the one line must contain)
CASES = {
    # -- wrong types through the Python API --------------------------------------------------
    "compute-none": (lambda c: ae.compute(None), ArgumentTypeError, "ae.compute: session"),
    "compute-a-path": (lambda c: ae.compute("s.json"), ArgumentTypeError, "got 's.json' (str)"),
    "compute-a-trace": (lambda c: ae.compute(T), ArgumentTypeError, "what ae.compute returns"),
    "compute-a-dict": (lambda c: ae.compute({"tokens": []}), ArgumentTypeError, "got a dict"),
    "compute-preview-float": (
        lambda c: ae.compute(S, preview=1.5),
        ArgumentTypeError,
        "preview must be a whole number",
    ),
    "save-none-session": (
        lambda c: ae.save(None, c.tmp / "s.json"),
        ArgumentTypeError,
        "ae.save: session",
    ),
    "save-none-path": (lambda c: ae.save(S, None), ArgumentTypeError, "ae.save: path"),
    "save-int-path": (lambda c: ae.save(S, 5), ArgumentTypeError, "got 5 (int)"),
    "save-bytes-path": (lambda c: ae.save(S, b"s.json"), ArgumentTypeError, "a file path"),
    "save-empty-path": (lambda c: ae.save(S, ""), ValueError, "path is empty"),
    "save-nul-in-path": (lambda c: ae.save(S, "a\x00b.json"), ValueError, "NUL"),
    "save-a-trace": (lambda c: ae.save(T, c.tmp / "s.json"), ArgumentTypeError, "session"),
    "load-none": (lambda c: ae.load(None), ArgumentTypeError, "ae.load: path"),
    "load-a-session": (lambda c: ae.load(S), ArgumentTypeError, "got a SessionData"),
    "resize-none": (lambda c: ae.resize(None, tokens=3), ArgumentTypeError, "ae.resize: session"),
    "resize-tokens-float": (
        lambda c: ae.resize(S, tokens=1.5),
        ArgumentTypeError,
        "tokens must be a whole number such as 4, got 1.5 (float)",
    ),
    "resize-tokens-string": (
        lambda c: ae.resize(S, tokens="5"),
        ArgumentTypeError,
        "got '5' (str)",
    ),
    "resize-tokens-bool": (lambda c: ae.resize(S, tokens=True), ArgumentTypeError, "True (bool)"),
    "resize-heads-list": (lambda c: ae.resize(S, heads=[2]), ArgumentTypeError, "got a list"),
    "resize-d-k-nan": (lambda c: ae.resize(S, d_k=float("nan")), ArgumentTypeError, "nan"),
    "export-a-session": (
        lambda c: ae.export(S, c.tmp / "w.csv"),
        ArgumentTypeError,
        "compute it first",
    ),
    "export-none-trace": (lambda c: ae.export(None, c.tmp / "w.csv"), ArgumentTypeError, "trace"),
    "export-none-path": (lambda c: ae.export(T, None), ArgumentTypeError, "ae.export: path"),
    "explain-a-session": (lambda c: ae.explain(S, "weights"), ArgumentTypeError, "ae.explain"),
    "explain-head-float": (
        lambda c: ae.explain(T, "weights", 0.5),
        ArgumentTypeError,
        "head must be a whole number",
    ),
    "explain-cell-string": (lambda c: ae.explain(T, "weights", 0, "1"), ArgumentTypeError, "i "),
    "show-a-trace": (lambda c: ae.show(T, block=False), ArgumentTypeError, "ae.show: session"),
    "model-text-none": (
        lambda c: ae.from_model(c.model, None),
        ArgumentTypeError,
        "text must be a str",
    ),
    "model-layer-string": (
        lambda c: ae.from_model(c.model, "hello", layer="0"),
        ArgumentTypeError,
        "layer must be a whole number",
    ),
    # -- unbounded work: refused before allocating ------------------------------------------
    "resize-tokens-1e30": (
        lambda c: ae.resize(S, tokens=10**30),
        AttentionInputError,
        "at most 16384",
    ),
    "resize-tokens-100000": (lambda c: ae.resize(S, tokens=100_000), AttentionInputError, "16384"),
    "resize-tokens-16385": (lambda c: ae.resize(S, tokens=16_385), AttentionInputError, "16384"),
    "resize-tokens-0": (lambda c: ae.resize(S, tokens=0), AttentionInputError, "at least 1"),
    "resize-tokens-negative": (lambda c: ae.resize(S, tokens=-5), AttentionInputError, "got -5"),
    "resize-kv-tokens-1e30": (
        lambda c: ae.resize(S, kv_tokens=10**30),
        AttentionInputError,
        "kv_tokens",
    ),
    "resize-d-model-1e9": (
        lambda c: ae.resize(S, d_model=10**9),
        AttentionInputError,
        "d_model: 1000000000",
    ),
    "resize-d-k-1e9": (lambda c: ae.resize(S, d_k=10**9), AttentionInputError, "d_k: 1000000000"),
    "resize-heads-1e6": (lambda c: ae.resize(S, heads=10**6), AttentionInputError, "heads"),
    "resize-kv-heads-1e6": (lambda c: ae.resize(S, kv_heads=10**6), AttentionInputError, "256"),
    "resize-heads-times-d-k": (
        lambda c: ae.resize(S, heads=256, d_k=1024),
        AttentionInputError,
        "wider than this app computes",
    ),
    "resize-numpy-huge": (
        lambda c: ae.resize(S, tokens=np.int64(2**62)),
        AttentionInputError,
        "tokens",
    ),
    "model-text-10-million-chars": (
        lambda c: ae.model_attention(c.model, "a" * 10_000_000),
        ModelError,
        "10,000,000 characters",
    ),
    "model-text-past-positions": (
        lambda c: ae.from_model(c.model, "hello " * 200),
        ModelError,
        "16 positions",
    ),
    "model-id-text-10-million-chars": (
        lambda c: ae.model_attention("no-such/model-id", "a" * 10_000_000),
        ModelError,
        "token limit",
    ),
    # -- saves the loader would refuse -------------------------------------------------------
    "save-nan-weight": (_save(_nan_session()), SessionFileError, "inputs.W_Q [0, 0] is nan"),
    "save-infinite-input": (_save(_inf_session()), SessionFileError, "inputs.X [2, 1] is inf"),
    "save-name-5000-chars": (_save(S.with_changes(name="n" * 5000)), SessionFileError, "name"),
    "save-description-100001-chars": (
        _save(S.with_changes(description="d" * 100_001)),
        SessionFileError,
        "description",
    ),
    "save-token-name-5000-chars": (
        _save(S.with_changes(tokens=("x" * 5000, *S.tokens[1:]))),
        SessionFileError,
        "tokens",
    ),
    "save-2000-notes": (
        _save(S.with_changes(notes=(("t", "x"),) * 2000)),
        SessionFileError,
        "notes",
    ),
    "save-lone-surrogate-name": (
        _save(S.with_changes(name="a\ud800b")),
        SessionFileError,
        "would not open again (invalid Unicode",
    ),
}


class Context:
    """What the calls need: a folder to write in and the tiny model folder."""

    def __init__(self, tmp: Path, model: Path):
        self.tmp, self.model = tmp, model


def test_the_catalogue_covers_types_sizes_saves_and_texts():
    assert len(CASES) >= 50
    kinds = {kind for _, kind, _ in CASES.values()}
    assert {ArgumentTypeError, AttentionInputError, SessionFileError, ModelError} <= kinds


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_in_one_line(name, tmp_path, tiny_model):
    call, kind, words = CASES[name]
    context = Context(tmp_path, tiny_model)
    tracemalloc.start()
    try:
        with pytest.raises(kind) as info:
            call(context)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MOST_BYTES, f"{peak / 2**20:.0f} MiB allocated before the refusal"
    message = str(info.value)
    assert message.strip() and "\n" not in message
    assert words in message, message
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file


def test_argument_errors_are_type_errors_and_size_errors_value_errors():
    assert issubclass(ArgumentTypeError, TypeError)
    assert issubclass(AttentionInputError, ValueError) and issubclass(ModelError, ValueError)


def _nan_model(tiny_model, tmp_path):
    """A copy of the tiny model whose attention weights hold one NaN."""
    import shutil

    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "nan-model"
    shutil.copytree(tiny_model, folder)
    tensors = load_file(folder / "model.safetensors")
    key = next(k for k in tensors if k.endswith("attn.c_attn.weight"))
    tensors[key] = tensors[key].copy()
    tensors[key][0, 0] = np.nan
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


MODEL_OUT = {
    "nan-weight": (_nan_model, "hello world", "nan"),
    "text-100k-chars": (lambda m, t: m, "hello " * 20_000, "characters"),
}


@pytest.mark.parametrize("name", sorted(MODEL_OUT))
def test_model_out_never_writes_a_file_the_app_refuses(name, tiny_model, tmp_path, capsys):
    from attention_explorer.cli import main

    make, text, words = MODEL_OUT[name]
    out = tmp_path / "out.json"
    code = main(
        ["model", "--model", str(make(tiny_model, tmp_path)), "--text", text, "--out", str(out)]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and words in err.lower(), err
    assert not out.exists() and not list(tmp_path.glob(".ae-*"))
