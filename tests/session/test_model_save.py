"""Saved model sessions: by reference (model id, fingerprint, changed cells) and standalone
(binary arrays). Small, exact to the bit, and clear when the model is missing or changed."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from model_save_folders import TEXT, minilm_folder, tiny_folder  # noqa: F401 - fixtures

import attention_explorer as ae
from attention_explorer.session.file_format import session_to_dict
from attention_explorer.session.resize import set_mode
from attention_explorer.session.session_errors import SessionFileError

ONE_MB = 1024 * 1024


def bits(array: np.ndarray) -> bytes:
    """The exact bytes of ``array`` as float64 (so -0.0 and 0.0 differ)."""
    return np.ascontiguousarray(array, dtype=np.float64).tobytes()


def assert_same(a, b) -> None:
    """``a`` and ``b`` hold the same tokens, settings and numbers, to the bit."""
    assert a.tokens == b.tokens and a.config == b.config and a.name == b.name
    assert sorted(a.inputs.arrays()) == sorted(b.inputs.arrays())
    for key, array in a.inputs.arrays().items():
        assert array.shape == b.inputs.arrays()[key].shape, key
        assert bits(array) == bits(b.inputs.arrays()[key]), key


def edited(session, **cells):
    """``session`` with cells set: ``W_Q=((row, col, value), ...)``."""
    arrays = {}
    for name, changes in cells.items():
        array = getattr(session.inputs, name).copy()
        for row, col, value in changes:
            array.reshape(-1, array.shape[-1])[row, col] = value  # vectors: row 0
        arrays[name] = array
    return session.with_changes(inputs=session.inputs.with_changes(**arrays))


def one_line_error(path) -> str:
    with pytest.raises(SessionFileError) as err:
        ae.load(path)
    text = str(err.value)
    assert len(text.splitlines()) == 1, text
    return text


def test_a_minilm_session_is_saved_small_and_reopens_exact(minilm_folder, tmp_path):  # noqa: F811
    base = ae.from_model(minilm_folder, "The cat sat on the mat because it was tired.", layer=2)
    old_bytes = len(json.dumps(session_to_dict(base), indent=1))
    session = edited(base, W_Q=[(3, 5, 5.0)], X=[(0, 0, -0.0), (4, 7, 1e-300)], b_O=[(0, 2, 0.5)])
    session = session.with_changes(config=session.config.with_changes(temperature=2.0), name="mine")
    path = ae.save(session, tmp_path / "minilm.json")
    size = path.stat().st_size
    print(f"\nMiniLM layer 2: JSON numbers {old_bytes} B, by reference {size} B")
    assert old_bytes > 10 * ONE_MB and size <= ONE_MB
    doc = json.loads(path.read_text())
    assert doc["inputs"] == {"mode": "projection"} and len(doc["model"]["changes"]) == 4
    assert doc["model"]["fingerprint"].startswith("sha256:")
    assert_same(ae.load(path), session)


def test_a_minilm_standalone_save_embeds_binary_numbers(minilm_folder, tmp_path):  # noqa: F811
    session = edited(ae.from_model(minilm_folder, "A dog ran.", layer=0), W_K=[(0, 0, 7.0)])
    path = ae.save(session, tmp_path / "alone.json", standalone=True)
    doc = json.loads(path.read_text())
    print(f"\nMiniLM layer 0 standalone: {path.stat().st_size} B")
    assert "model" not in doc and doc["inputs"] == {"mode": "projection"}
    assert doc["arrays"]["W_Q"]["dtype"] == "<f4"  # float32 checkpoint weights: lossless
    assert doc["arrays"]["X"]["dtype"] == "<f8" and doc["arrays"]["X"]["shape"][1] == 384
    assert_same(ae.load(path), session)


def test_round_trip_with_whole_arrays_removed_biases_and_new_settings(tiny_folder, tmp_path):  # noqa: F811
    base = ae.from_model(tiny_folder, TEXT, layer=1)
    session = edited(base, W_Q=[(0, 1, 3.25)])
    inputs = session.inputs.with_changes(W_V=base.inputs.W_V * 2.0, b_Q=None)
    session = session.with_changes(
        inputs=inputs, config=session.config.with_changes(mask="none", temperature=0.5)
    )
    path = ae.save(session, tmp_path / "t.json")
    ref = json.loads(path.read_text())["model"]
    assert ref["changes"] == [["W_Q", 0, 1, 3.25]]
    assert list(ref["arrays"]) == ["W_V"] and ref["removed"] == ["b_Q"]
    assert_same(ae.load(path), session)


def test_knocked_out_heads_are_saved_and_opened_again(tiny_folder, tmp_path):  # noqa: F811
    """A session with knockouts was refused at save ("experiment.model.knockout: unknown
    key"): the knocked-out heads are part of the model record and round-trip with it."""
    base = ae.from_model(tiny_folder, TEXT, layer=1)
    experiment = dict(base.experiment)
    experiment["model"] = {**experiment["model"], "knockout": [[0, 0], [1, 0]]}
    session = base.with_changes(experiment=experiment)
    for standalone in (False, True):
        path = ae.save(session, tmp_path / f"knocked-{standalone}.json", standalone=standalone)
        again = ae.load(path)
        assert [list(pair) for pair in again.experiment["model"]["knockout"]] == [[0, 0], [1, 0]]
        assert_same(again, session)
    bad = json.loads(path.read_text())
    bad["experiment"]["model"]["knockout"] = [[0, -1]]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(SessionFileError, match="knockout"):
        ae.load(tmp_path / "bad.json")


def test_a_model_session_switched_to_direct_mode_still_round_trips(tiny_folder, tmp_path):  # noqa: F811
    session = set_mode(ae.from_model(tiny_folder, TEXT, layer=0), "direct")
    path = ae.save(session, tmp_path / "direct.json")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(session_to_dict(session)))  # the loader resolves kv_heads
    assert "model" in json.loads(path.read_text())
    assert_same(ae.load(path), ae.load(old))


def test_the_model_is_found_again_by_its_id_in_the_hub_cache(tmp_path, monkeypatch):
    from model_save_folders import write_tiny_gpt2

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = tmp_path / "hub" / "models--learner--tiny" / "snapshots" / "abc123"
    write_tiny_gpt2(snapshot)
    session = edited(ae.from_model("learner/tiny", TEXT), X=[(1, 1, 9.0)])
    path = ae.save(session, tmp_path / "t.json")
    doc = json.loads(path.read_text())
    assert doc["model"]["id"] == "learner/tiny"
    doc["model"]["folder"] = str(tmp_path / "moved-away")  # the saved folder is gone
    path.write_text(json.dumps(doc))
    assert_same(ae.load(path), session)


def test_a_missing_model_is_named_with_where_it_looked(tiny_folder, tmp_path):  # noqa: F811
    path = ae.save(ae.from_model(tiny_folder, TEXT), tmp_path / "t.json")
    shutil.rmtree(tiny_folder)
    text = one_line_error(path)
    assert "'tiny-gpt2'" in text and str(tiny_folder) in text
    assert "not on this computer" in text and "Hugging Face cache" in text


def test_a_changed_checkpoint_is_refused(tiny_folder, tmp_path):  # noqa: F811
    path = ae.save(ae.from_model(tiny_folder, TEXT), tmp_path / "t.json")
    config = json.loads((tiny_folder / "config.json").read_text())
    (tiny_folder / "config.json").write_text(json.dumps({**config, "n_positions": 15}))
    text = one_line_error(path)
    assert "checkpoint" in text and "changed" in text and str(tiny_folder) in text


def test_a_changed_weight_file_is_refused_too(tiny_folder, tmp_path):  # noqa: F811
    from model_save_folders import write_tiny_gpt2

    path = ae.save(ae.from_model(tiny_folder, TEXT), tmp_path / "t.json")
    write_tiny_gpt2(tiny_folder, seed=1)  # same config, tokenizer, size and header
    assert "changed" in one_line_error(path)  # the sampled weight bytes differ


def test_a_model_missing_at_save_time_is_saved_standalone(tiny_folder, tmp_path):  # noqa: F811
    session = edited(ae.from_model(tiny_folder, TEXT), W_O=[(2, 2, -1.5)])
    shutil.rmtree(tiny_folder)
    path = ae.save(session, tmp_path / "t.json")
    doc = json.loads(path.read_text())
    assert "model" not in doc and set(doc["arrays"]) >= {"X", "W_Q", "W_O"}
    assert_same(ae.load(path), session)


def test_standalone_opens_without_the_model(tiny_folder, tmp_path):  # noqa: F811
    session = edited(ae.from_model(tiny_folder, TEXT, layer=1), b_V=[(0, 3, 0.125)])
    path = ae.save(session, tmp_path / "t.json", standalone=True)
    shutil.rmtree(tiny_folder)
    assert_same(ae.load(path), session)


def test_any_session_can_be_saved_standalone(tmp_path):
    session = ae.example("starter")
    path = ae.save(session, tmp_path / "s.json", standalone=True)
    assert "arrays" in json.loads(path.read_text())
    assert_same(ae.load(path), session)


def test_old_files_with_json_numbers_still_load(tiny_folder, tmp_path):  # noqa: F811
    session = edited(ae.from_model(tiny_folder, TEXT), W_K=[(0, 0, 2.0)])
    path = tmp_path / "old.json"
    path.write_text(json.dumps(session_to_dict(session), indent=1))
    assert_same(ae.load(path), session)
    starter = tmp_path / "starter.json"
    ae.save(ae.example("starter"), starter)  # not a model session: JSON numbers, as before
    doc = json.loads(starter.read_text())
    assert isinstance(doc["inputs"]["X"][0][0], float) and "arrays" not in doc
