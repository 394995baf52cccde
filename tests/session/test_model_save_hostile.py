"""Hostile model-reference and standalone files: each is refused with one clear line, before
numpy allocates what a file claims (a blob's byte count is checked against its shape first)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from model_save_folders import TEXT, tiny_folder  # noqa: F401 - fixtures

import attention_explorer as ae
from attention_explorer.session.session_errors import SessionFileError


def refused(path, doc) -> str:
    """Write ``doc`` to ``path``, load it, and return the one-line refusal."""
    path.write_text(json.dumps(doc))
    with pytest.raises(SessionFileError) as err:
        ae.load(path)
    text = str(err.value)
    assert len(text.splitlines()) == 1 and "Traceback" not in text, text
    return text


@pytest.fixture
def standalone(tmp_path) -> dict:
    """The starter session as a standalone document (binary arrays)."""
    path = ae.save(ae.example("starter"), tmp_path / "s.json", standalone=True)
    return json.loads(path.read_text())


@pytest.fixture
def reference(tiny_folder, tmp_path) -> dict:  # noqa: F811
    """A tiny model session as a model-reference document."""
    path = ae.save(ae.from_model(tiny_folder, TEXT), tmp_path / "r.json")
    return json.loads(path.read_text())


def blob(values, dtype="<f8", shape=None) -> dict:
    array = np.asarray(values, dtype=dtype)
    data = base64.b64encode(array.tobytes()).decode()
    return {"dtype": dtype, "shape": list(shape or array.shape), "data": data}


def test_a_reference_to_a_folder_that_is_not_a_model(reference, tmp_path):
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    (empty / "config.json").write_text("{}")
    reference["model"].update(id="no-such-model", folder=str(empty))
    text = refused(tmp_path / "f.json", reference)
    assert "'no-such-model'" in text and str(empty) in text and "not on this computer" in text


@pytest.mark.parametrize("folder", ["", "/dev/null", "~/../../.."])
def test_odd_folders_are_just_not_found(reference, tmp_path, folder):
    reference["model"].update(id="", folder=folder)
    assert "not on this computer" in refused(tmp_path / "f.json", reference)


def test_a_blob_of_the_wrong_length(standalone, tmp_path):
    standalone["arrays"]["X"] = blob(np.zeros(5), shape=[4, 2])
    text = refused(tmp_path / "f.json", standalone)
    assert "arrays.X.data" in text and "holds 40 bytes" in text and "needs 64" in text


def test_a_huge_claimed_shape_is_refused_by_its_byte_count(standalone, tmp_path):
    standalone["arrays"]["X"] = blob(np.zeros(8), shape=[10**7, 10**7])
    assert "holds 64 bytes" in refused(tmp_path / "f.json", standalone)


@pytest.mark.parametrize("dtype", ["<i8", ">f8", "float64", "O"])
def test_a_blob_of_an_unknown_dtype(standalone, tmp_path, dtype):
    standalone["arrays"]["X"]["dtype"] = dtype
    text = refused(tmp_path / "f.json", standalone)
    assert "arrays" in text and "dtype" in text


def test_a_blob_whose_shape_does_not_fit_the_session(standalone, tmp_path):
    standalone["arrays"]["X"] = blob(np.zeros((4, 3)))  # starter: d_model 4
    assert "X" in refused(tmp_path / "f.json", standalone)


@pytest.mark.parametrize("shape", [[], [1, 1, 1, 1], [0, 4], [-1, 4]])
def test_a_blob_with_a_shape_of_no_sense(standalone, tmp_path, shape):
    standalone["arrays"]["X"]["shape"] = shape
    assert "shape" in refused(tmp_path / "f.json", standalone)


def test_a_blob_that_is_not_base64(standalone, tmp_path):
    standalone["arrays"]["X"]["data"] = "not base64 at all!"
    assert "not valid base64" in refused(tmp_path / "f.json", standalone)


def test_a_blob_holding_nan(standalone, tmp_path):
    values = np.zeros((4, 4))
    values[2, 1] = np.nan
    standalone["arrays"]["X"] = blob(values)
    assert "[2, 1] is not a finite number" in refused(tmp_path / "f.json", standalone)


def test_an_array_given_twice(standalone, tmp_path):
    standalone["inputs"]["X"] = np.zeros((4, 4)).tolist()
    assert "also given elsewhere" in refused(tmp_path / "f.json", standalone)


def test_a_change_outside_its_array(reference, tmp_path):
    reference["model"]["changes"] = [["W_Q", 0, 0, 1.0], ["W_Q", 99, 0, 1.0]]
    text = refused(tmp_path / "f.json", reference)
    assert "model.changes[1]" in text and "outside W_Q" in text


@pytest.mark.parametrize("change", [["Z", 0, 0, 1.0], ["W_Q", -1, 0, 1.0], ["W_Q", 0, 0, "x"]])
def test_a_change_of_no_sense(reference, tmp_path, change):
    reference["model"]["changes"] = [change]
    assert "model.changes" in refused(tmp_path / "f.json", reference)


def test_numbers_in_inputs_beside_a_model_reference(reference, tmp_path):
    reference["inputs"]["X"] = np.zeros((6, 8)).tolist()
    assert "model" in refused(tmp_path / "f.json", reference)


def test_a_wrong_fingerprint_is_a_changed_checkpoint(reference, tmp_path):
    reference["model"]["fingerprint"] = "sha256:" + "0" * 64
    assert "changed" in refused(tmp_path / "f.json", reference)


def test_an_unknown_key_in_the_reference(reference, tmp_path):
    reference["model"]["weights"] = "elsewhere"
    assert "model.weights" in refused(tmp_path / "f.json", reference)
