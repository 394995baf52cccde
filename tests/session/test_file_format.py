"""Session files: the minimal form loads, bad files name the JSON path, saves are atomic."""

import json
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.session import SessionFileError, load_session, loads_session, save_session
from attention_explorer.session.file_format import dumps_session
from attention_explorer.session.starter import starter_session

SAMPLE = Path(__file__).parents[1] / "sample_session.json"


def minimal(**overrides) -> dict:
    doc = json.loads(SAMPLE.read_text())
    doc.update(overrides)
    return doc


def test_readme_minimal_form_loads_and_computes():
    data = load_session(SAMPLE)
    assert data.tokens == ("I", "love", "pizza")
    assert data.config.mask == "causal" and data.config.head_dim == 2
    trace = compute(data.inputs, data.config, tokens=data.tokens)
    # causal: the first token can only look at itself
    np.testing.assert_allclose(trace.stage("weights", 0)[0], [1.0, 0.0, 0.0])


def test_projection_form_loads():
    doc = {
        "format": "attention-explorer-session",
        "version": 1,
        "tokens": ["a", "b"],
        "config": {"heads": 1, "d_model": 2},
        "inputs": {
            "mode": "projection",
            "X": [[1, 0], [0, 1]],
            "W_Q": [[1, 0], [0, 1]],
            "W_K": [[1, 0], [0, 1]],
            "W_V": [[1, 0], [0, 1]],
            "W_O": [[1, 0], [0, 1]],
        },
    }
    data = loads_session(json.dumps(doc))
    assert data.config.mode == "projection"
    trace = compute(data.inputs, data.config)
    assert trace["output"].shape == (2, 2)


def test_round_trip_keeps_every_number(tmp_path):
    data = starter_session()
    path = save_session(tmp_path / "s.json", data)
    again = load_session(path)
    assert again == data
    assert again.inputs == data.inputs


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"format": "something-else"}, "format"),
        ({"version": 2}, "version"),
        ({"tokens": ["I", "love"]}, "tokens"),
        ({"tokens": ["I", 3, "pizza"]}, "tokens[1]"),
        ({"config": {"heads": "one"}}, "config.heads"),
        ({"config": {"colour": 1}}, "config.colour"),
        ({"config": {"mask": "diagonal"}}, "config.mask"),
    ],
)
def test_bad_fields_are_named(change, where):
    with pytest.raises(SessionFileError) as info:
        loads_session(json.dumps(minimal(**change)))
    assert info.value.path == where


def test_wrong_row_count_names_the_matrix():
    doc = minimal()
    doc["inputs"]["K"] = [[[1, 0], [1, 1]]]
    with pytest.raises(SessionFileError) as info:
        loads_session(json.dumps(doc))
    assert info.value.path == "inputs.K"
    assert "1x3x2" in info.value.message and "1x2x2" in info.value.message


def test_ragged_and_non_numeric_matrices_are_refused():
    doc = minimal()
    doc["inputs"]["Q"] = [[[1, 0], [1], [0, 1]]]
    with pytest.raises(SessionFileError, match="different lengths"):
        loads_session(json.dumps(doc))
    doc["inputs"]["Q"] = [[[1, 0], [1, "x"], [0, 1]]]
    with pytest.raises(SessionFileError) as info:
        loads_session(json.dumps(doc))
    assert info.value.path == "inputs.Q[0][1][1]"


def test_nan_literal_and_broken_json_are_refused():
    with pytest.raises(SessionFileError, match="NaN"):
        loads_session(SAMPLE.read_text().replace("[1, 0]", "[NaN, 0]", 1))
    with pytest.raises(SessionFileError, match="not valid JSON"):
        loads_session(SAMPLE.read_text()[:-10])


def test_missing_file_and_binary_file(tmp_path):
    with pytest.raises(SessionFileError, match="does not exist"):
        load_session(tmp_path / "nope.json")
    blob = tmp_path / "blob.json"
    blob.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SessionFileError):
        load_session(blob)


def test_failed_save_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "s.json"
    path.write_text("original")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("attention_explorer.session.file_format.os.replace", broken_replace)
    with pytest.raises(SessionFileError, match="disk is full"):
        save_session(path, starter_session())
    assert path.read_text() == "original"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_dumps_is_strict_json():
    text = dumps_session(starter_session())
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in output"))
