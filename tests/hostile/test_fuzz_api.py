"""Fuzz the values the API and the command line guard: sizes given to ``ae.resize``, names given
to ``compute --out``, names and texts saved by ``ae.save``, and the values of a model folder's
config.json read by the text bound. Each either works (and what it wrote reads back) or is
refused in one line by the documented exception; nothing is left half-written."""

from __future__ import annotations

import json
import os
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

import attention_explorer as ae
from attention_explorer.cli import main
from attention_explorer.engine import AttentionInputError
from attention_explorer.engine.budget import MAX_TOKENS
from attention_explorer.pretrained.checkpoint.text_limits import model_positions, text_char_limit
from attention_explorer.session import SessionFileError, load_session
from attention_explorer.session.argument_checks import ArgumentTypeError

S = ae.example("starter")
FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

SIZES = st.one_of(
    st.integers(-3, 12),  # small: computed for real
    st.integers(MAX_TOKENS + 1, 10**40),  # over every limit
    st.integers(-(10**40), -1),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.booleans(),
    st.lists(st.integers(1, 3), max_size=2),
)
NAMES = ("tokens", "kv_tokens", "heads", "d_model", "d_k", "kv_heads")


def _one_line(exc: BaseException) -> None:
    assert str(exc).strip() and "\n" not in str(exc)


@FAST
@given(st.dictionaries(st.sampled_from(NAMES), SIZES, min_size=1, max_size=3))
def test_resize_works_or_refuses_in_one_line(sizes):
    try:
        data = ae.resize(S, **sizes)
    except (ArgumentTypeError, AttentionInputError) as exc:
        _one_line(exc)
        return
    assert len(data.tokens) == sizes.get("tokens", len(data.tokens))
    assert ae.compute(data)["weights"].shape[0] == data.config.heads


def _printable(text: str) -> bool:
    return all(
        c in "\n\t" or unicodedata.category(c) not in {"Cc", "Cf", "Zl", "Zp", "Cs"} for c in text
    )


@FAST
@given(st.text(min_size=1, max_size=260).filter(lambda t: "\x00" not in t))
def test_compute_out_any_name_writes_or_refuses_in_one_line(name):
    with tempfile.TemporaryDirectory() as folder:
        import contextlib
        import io

        out, err = io.StringIO(), io.StringIO()
        path = Path(folder) / name
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["compute", "--example", "starter", "--out", str(path)])
        assert _printable(out.getvalue() + err.getvalue())
        assert not [p for p in Path(folder).rglob(".ae-*")]
        if code == 0:
            assert os.path.isfile(path)
        else:
            assert code == 2 and len(err.getvalue().strip().splitlines()) == 1


@FAST
@given(name=st.text(max_size=1200), description=st.text(max_size=50))
def test_save_writes_what_loads_or_refuses(name, description):
    data = S.with_changes(name=name, description=description)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        try:
            ae.save(data, path)
        except SessionFileError as exc:
            _one_line(exc)
            assert "not saved" in str(exc) and os.listdir(folder) == []
            return
        assert load_session(path).name == name


CONFIG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@FAST
@given(
    st.dictionaries(
        st.sampled_from(["max_position_embeddings", "n_positions", "n_ctx", "other"]),
        CONFIG_VALUES,
        max_size=3,
    )
)
def test_the_text_bound_reads_any_config_values(config):
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "config.json").write_text(json.dumps(config))
        positions = model_positions(folder)
        assert positions is None or 1 <= positions <= MAX_TOKENS
        assert text_char_limit(folder) >= 64
