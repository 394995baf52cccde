"""The KV-cache worked examples (generation/worked_example.py and worked_latent.py): what the
measures say is what the notes claim (tiny-induction has no sink; a short window breaks the
copy, one sink does not mend it, the first tokens holding the list do), the notes quote the
live numbers, the sessions load and show what they say, and the shipped files are today's."""

from __future__ import annotations

import json
from importlib.resources import files

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.engine import compute
from attention_explorer.generation import worked_example as example, worked_latent as latent_example
from attention_explorer.session.examples import PACKAGE
from attention_explorer.session.file_format import load_session_bytes

RUN = example.RUN


@pytest.fixture(scope="module")
def sinks() -> dict:
    return example.sink_measures()


@pytest.fixture(scope="module")
def latent() -> dict:
    return latent_example.latent_measures()


def _load(document: dict):
    body = {k: v for k, v in document.items() if k != "_key"}
    return load_session_bytes(json.dumps(body).encode("utf-8"), f"{document['_key']}.json")


def test_tiny_induction_has_no_sink_and_copies_with_the_full_cache(sinks):
    full = sinks["runs"]["full"]
    assert full["tokens"] == RUN[2:]  # the list's continuation
    assert min(full["probs"]) > 0.99
    weights = np.array(full["sink_weights"])  # [steps, layers] on position 0
    uniform = min(1 / (p + 1) for p in full["positions"])
    assert weights.max() < uniform / 5  # far under a uniform share: no sink
    assert full["first_row"][2] > 0.9  # the induction head reads "wolf" after "bear"
    assert full["held"] == len(example.PROMPT.split()) + example.STEPS - 1


def test_a_window_breaks_the_copy_and_one_sink_does_not_mend_it(sinks):
    runs = sinks["runs"]
    full, window, one = runs["full"]["tokens"], runs["window"]["tokens"], runs["one sink"]
    assert window != full and one["tokens"] == window
    assert runs["window"]["first_row"][2] == 0.0  # "wolf" is evicted: weight exactly 0
    assert one["first_row"][0] > 100 * runs["full"]["first_row"][0]  # the weight moves on
    assert sinks["smallest"] == sinks["smallest_one_sink"] == 8
    assert runs["window"]["held"] == 3 and runs["window"]["cache_bytes"] == 3 * 2048


def test_the_first_tokens_that_hold_the_list_keep_the_text(sinks):
    runs = sinks["runs"]
    four = runs["four first"]["tokens"]
    assert four[:2] == RUN[2:4] and four[2] != RUN[4]  # copies what positions 0-3 hold
    kept = runs["list kept"]
    assert kept["tokens"] == runs["full"]["tokens"]
    np.testing.assert_allclose(kept["probs"], runs["full"]["probs"], atol=1e-5)  # 4 decimals
    assert kept["held"] == 9 < runs["full"]["held"]
    assert kept["cache_bytes"] == 9 * sinks["per_position"]


def test_the_first_token_notes_quote_the_live_numbers(sinks):
    texts = " ".join(n["text"] for n in example.sink_notes(sinks))
    runs = sinks["runs"]
    for name in example.POLICIES:
        assert " ".join(runs[name]["tokens"]) in texts
    assert f"{runs['window']['probs'][0]:.4f}" in texts
    assert f"{runs['one sink']['first_row'][0]:.2%}" in texts
    assert f"{runs['full']['cache_bytes']:,} bytes" in texts


def test_the_first_token_session_is_the_first_steps_row(sinks):
    document = example.sink_document()
    data = _load(document)
    assert document["_key"] == example.SINK_KEY and data.notes
    assert [n["text"] for n in document["notes"]] == [n["text"] for n in example.sink_notes(sinks)]
    focus = data.experiment["focus"]
    assert data.tokens[focus["row"]] == "bear" and data.tokens[focus["col"]] == "wolf"
    trace = compute(data.inputs, data.config, dtype="float64", tokens=data.tokens)
    row = trace.stage("weights", 0)[focus["row"]]  # [n] layer 1's head, the last query
    np.testing.assert_allclose(row, sinks["runs"]["full"]["first_row"], atol=1e-5)
    # the one-click experiment: the engine's window of 4 on this layer hides "wolf"
    assert data.experiment["try"] == {"window": example.WINDOW}
    windowed = example.windowed_row(document)  # [n]
    assert windowed[focus["col"]] == 0.0 and abs(sum(windowed) - 1) < 1e-12
    top = int(np.argmax(windowed))
    assert top >= len(data.tokens) - example.WINDOW
    assert f"{windowed[top]:.2%}" in data.experiment["expect"]


def test_deepseek_v3s_shape_is_transformers_default():
    transformers = pytest.importorskip("transformers")
    config = transformers.DeepseekV3Config()
    assert {k: getattr(config, k) for k in latent_example.DEEPSEEK_V3} == latent_example.DEEPSEEK_V3


def test_the_latent_numbers_are_the_cache_arithmetic(latent):
    d = latent["designs"]
    assert (d["mla"]["numbers"], d["mha"]["numbers"]) == (512 + 64, 128 * (192 + 128))
    assert d["mla"]["all_layers"] == 576 * 2 * 61
    size = ae.cache_size(latent_example.DEEPSEEK_V3, "bfloat16")
    assert d["gqa8"]["all_layers"] == size.gqa(8).all_layers == 8 * 320 * 2 * 61
    assert d["mha"]["context"] == size.mha.all_layers * latent_example.CONTEXT
    assert d["gqa1"]["numbers"] < d["mla"]["numbers"] < d["gqa8"]["numbers"]


def test_the_toy_sessions_keys_and_values_come_from_the_latent(latent):
    toy = latent["toy"]
    assert toy["numbers"] == toy["mha"] == 32 and toy["rank"] == latent_example.TOY_RANK
    assert toy["error"] < 1e-12
    document = latent_example.latent_document()
    data = _load(document)
    trace = compute(data.inputs, data.config, dtype="float64", tokens=data.tokens)
    K = np.concatenate([trace.stage("K", h) for h in range(latent_example.TOY_HEADS)], axis=1)
    assert np.linalg.matrix_rank(K) == latent_example.TOY_RANK  # [n, h*d_k] from 3 numbers a token
    c = np.array(toy["last_latent"])  # [r] the last token's latent, quoted in the notes
    np.testing.assert_allclose(K[-1], c @ latent_example.toy_weights()["W_UK"], atol=1e-12)
    texts = " ".join(n["text"] for n in document["notes"])
    assert f"{latent['designs']['mha']['all_layers']:,} bytes" in texts
    assert f"rank {latent_example.TOY_RANK}" in texts


@pytest.mark.parametrize("key", [example.SINK_KEY, latent_example.LATENT_KEY])
def test_the_shipped_files_match_when_generated(key, sinks, latent):
    shipped = files(PACKAGE) / f"{key}.json"
    if not shipped.is_file():
        pytest.skip("tools/make_examples.py has not written this example yet")
    on_disk = json.loads(shipped.read_text(encoding="utf-8"))
    if key == example.SINK_KEY:
        notes = example.sink_notes(sinks)
    else:
        notes = latent_example.latent_notes(latent)
    assert [n["text"] for n in on_disk["notes"]] == [n["text"] for n in notes]
