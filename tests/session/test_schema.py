"""The session format declared once: the published JSON Schema is the code's, types are strict,
sizes are inferred from the matrices, and every bad input ends as SessionFileError."""

import json
from pathlib import Path

import pytest

from attention_explorer.engine import AttentionConfig
from attention_explorer.session import SessionFileError, loads_session
from attention_explorer.session.file_format import session_json_schema

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "tests" / "sample_session.json"


def sample(**overrides) -> dict:
    doc = json.loads(SAMPLE.read_text())
    doc.update(overrides)
    return doc


def test_published_schema_is_the_codes():
    published = json.loads((ROOT / "resources" / "session.schema.json").read_text())
    assert published == session_json_schema(), (
        "resources/session.schema.json is stale: regenerate it from session_json_schema()"
    )


def test_schema_names_every_setting_and_refuses_unknown_keys():
    schema = session_json_schema()
    config = schema["$defs"]["ConfigFields"]
    assert set(config["properties"]) == set(AttentionConfig.field_names())
    assert config["additionalProperties"] is False
    root = schema["$defs"]["SessionFile"]
    assert set(root["required"]) == {"format", "version", "tokens", "inputs"}
    assert root["properties"]["config"]["$ref"].endswith("ConfigFields")


def projection_doc(**config) -> dict:
    eye = [[1.0 if i == j else 0.0 for j in range(16)] for i in range(16)]
    return {
        "format": "attention-explorer-session",
        "version": 1,
        "tokens": list("abcde"),
        "config": {"heads": 2, **config},
        "inputs": {
            "mode": "projection",
            "X": [[float(i + j) for j in range(16)] for i in range(5)],
            "W_Q": eye,
            "W_K": eye,
            "W_V": eye,
            "W_O": eye,
        },
    }


def test_d_model_is_read_from_x_when_omitted():
    data = loads_session(json.dumps(projection_doc()))
    assert data.config.d_model == 16 and data.config.head_dim == 8


def test_d_k_and_d_v_are_read_from_the_weights():
    doc = projection_doc()
    doc["inputs"]["W_Q"] = doc["inputs"]["W_K"] = [[0.5] * 6 for _ in range(16)]  # 2 heads of 3
    doc["inputs"]["W_V"] = [[0.5] * 10 for _ in range(16)]  # 2 heads of 5
    doc["inputs"]["W_O"] = [[0.5] * 16 for _ in range(10)]
    data = loads_session(json.dumps(doc))
    assert (data.config.head_dim, data.config.value_dim) == (3, 5)


def test_given_d_model_is_checked_against_x():
    with pytest.raises(SessionFileError) as info:
        loads_session(json.dumps(projection_doc(d_model=4)))
    assert info.value.path == "inputs.X" and "5x4" in info.value.message


@pytest.mark.parametrize(
    ("mutate", "where", "fragment"),
    [
        (
            lambda d: d["config"].update(custom_mask=[["false"] * 3] * 3, mask="custom"),
            "config.custom_mask[0][0]",
            "bool",
        ),
        (lambda d: d.update(notes=5), "notes", "array"),
        (lambda d: d.update(notes=None), "notes", "null"),
        (lambda d: d["config"].update(heads=True), "config.heads", "bool"),
        (lambda d: d["config"].update(heads=10**400), "config.heads", "<="),
        (lambda d: d["config"].update(temperature=10**400), "config.temperature", "range"),
        (lambda d: d.update(experiment={"try": {"heads": "3"}}), "experiment.try.heads", "int"),
        (lambda d: d["inputs"].update(Q=[[[[[1.0]]]]]), "inputs.Q", "5 levels"),
        (
            lambda d: d["inputs"].update(K=[[[1, 10**400], [1, 1], [0, 1]]]),
            "inputs.K[0][0][1]",
            "range",
        ),
        (lambda d: d["config"].update(colour=1), "config.colour", "known: mode, heads"),
        (lambda d: d.pop("tokens"), "tokens", "missing"),
    ],
)
def test_wrong_types_are_named_by_json_path(mutate, where, fragment):
    doc = sample()
    mutate(doc)
    with pytest.raises(SessionFileError) as info:
        loads_session(json.dumps(doc))
    assert info.value.path == where, str(info.value)
    assert fragment in info.value.message
    assert "\n" not in str(info.value)


def test_byte_order_mark_is_accepted():
    text = SAMPLE.read_text()
    assert loads_session(b"\xef\xbb\xbf" + text.encode()).tokens == ("I", "love", "pizza")
    assert loads_session("\ufeff" + text).tokens == ("I", "love", "pizza")


def test_lone_surrogate_is_refused_by_name():
    escaped = SAMPLE.read_text().replace('"love"', '"\\ud800"')
    with pytest.raises(SessionFileError, match="lone surrogate"):
        loads_session(escaped)
    with pytest.raises(SessionFileError, match="lone surrogate"):
        loads_session(SAMPLE.read_text().replace("love", "\ud800"))


def test_deep_nesting_is_refused():
    with pytest.raises(SessionFileError, match="nested too deeply|5 levels|expected"):
        loads_session(SAMPLE.read_text().replace('"love"', "[" * 100_000 + "]" * 100_000))
    with pytest.raises(SessionFileError, match="nested too deeply"):
        loads_session(
            '{"format": "attention-explorer-session", "version": 1, "x": '
            + "[" * 100_000
            + "]" * 100_000
            + "}"
        )


def test_size_cap_counts_the_bytes_read(tmp_path, monkeypatch):
    from attention_explorer.session import load_session, reading

    path = tmp_path / "big.json"
    path.write_bytes(SAMPLE.read_bytes() + b" " * 4096)  # valid JSON, padded past the cap
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 2048)
    with pytest.raises(SessionFileError, match="larger than 2048 bytes"):
        load_session(path)
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 64 * 1024)
    assert load_session(path).tokens == ("I", "love", "pizza")


def test_session_from_dict_refuses_what_json_cannot_hold():
    from attention_explorer.session.file_format import session_from_dict

    with pytest.raises(SessionFileError, match="not a JSON document"):
        session_from_dict({**sample(), "name": object()})
    assert session_from_dict(sample()).tokens == ("I", "love", "pizza")
