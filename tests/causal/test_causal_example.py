"""The patching worked example (causal/worked_example.py): its session loads and opens on
the induction head's row, its notes quote the numbers the patching API computes now, and
those numbers say what the notes claim (the induction head carries the copy; its weights
alone restore well under half)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_explorer.causal import worked_example as example
from attention_explorer.engine import compute
from attention_explorer.session.examples import PACKAGE
from attention_explorer.session.file_format import load_session_bytes


@pytest.fixture(scope="module")
def measured() -> dict:
    return example.measures()


@pytest.fixture(scope="module")
def document() -> dict:
    return example.document()


def test_the_maps_say_what_the_notes_claim(measured):
    maps = measured["maps"]
    tokens, corrupted = measured["tokens"], measured["corrupted_tokens"]
    assert len(tokens) == len(corrupted) == 18
    assert measured["clean"] > 5 and measured["corrupted"] < -5
    assert maps["head_out"][1][0] > 0.99  # the induction head carries the whole answer
    assert 0.2 < maps["head_out"][0][0] < 0.8  # the previous-token head, part of it
    last_row = maps["attn_out"][1]
    assert last_row[-1] > 0.99 and max(abs(v) for v in last_row[:-1]) < 0.01
    resid = maps["resid_pre"][1]
    key_at, wrong_at = tokens.index("crab"), corrupted.index("bear")
    assert (key_at, wrong_at) == (10, 7)
    assert resid[key_at] > 0.2 and resid[wrong_at] > 0.5
    assert 0.2 < maps["pattern"][1][0] < 0.6  # where it looks is not the whole story
    assert measured["attribution"][1][0] > 10 > abs(measured["attribution"][0][0]) * 100


def test_the_notes_quote_the_live_numbers(measured, document):
    texts = " ".join(note["text"] for note in document["notes"])
    maps = measured["maps"]
    for value in (maps["head_out"][1][0], maps["head_out"][0][0], maps["pattern"][1][0]):
        assert example._percent(value) in texts
    assert f"{measured['clean']:.2f}" in texts and f"{measured['corrupted']:.2f}" in texts
    assert f"{measured['attribution'][1][0]:+.2f}" in texts
    assert example.notes(measured) == document["notes"]


def test_the_session_opens_on_the_induction_heads_row(document):
    body = {k: v for k, v in document.items() if k != "_key"}
    data = load_session_bytes(json.dumps(body).encode("utf-8"), f"{example.KEY}.json")
    assert document["_key"] == example.KEY and data.notes
    focus = data.experiment["focus"]
    assert data.tokens[focus["row"]] == "swan" and data.tokens[focus["col"]] == "crab"
    trace = compute(data.inputs, data.config, dtype="float64", tokens=data.tokens)
    weights = trace.stage("weights", 0)  # [n, n]: the induction head
    assert weights[focus["row"], focus["col"]] > 0.9
    assert data.experiment["model"] == {"name": "tiny-induction", "text": example.CLEAN, "layer": 1}


def test_the_shipped_file_matches_when_generated(document):
    from importlib.resources import files

    shipped = files(PACKAGE) / f"{example.KEY}.json"
    if not shipped.is_file():
        pytest.skip("tools/make_examples.py has not written this example yet")
    on_disk = json.loads(shipped.read_text(encoding="utf-8"))
    assert on_disk["notes"] == document["notes"]  # the numbers are today's
    np.testing.assert_allclose(on_disk["inputs"]["X"], document["inputs"]["X"])
