"""Issue 32, item 1: one unreadable folder anywhere in the Hugging Face cache breaks nothing.

``ae.models()`` skips it (a logging warning, once), a session saved by reference still opens
and saves, File > Open reports a problem in a dialog and never raises out of its slot, and a
session whose own model folder cannot be read says so in one line."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest
from denied import deny

import attention_explorer as ae
from attention_explorer.pretrained import ModelError
from attention_explorer.session import SessionFileError


def cache_with(tmp_path, model, monkeypatch, repo="models--someone--tiny"):
    """A Hugging Face cache holding ``model`` as ``someone/tiny``; its root."""
    cache = tmp_path / "hub"
    snapshot = cache / repo / "snapshots" / "abc"
    shutil.copytree(model, snapshot)
    (cache / repo / "refs").mkdir()
    (cache / repo / "refs" / "main").write_text("abc")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


@pytest.mark.parametrize("where", ["repo", "snapshots", "snapshot", "inside"])
def test_models_skip_an_unreadable_folder_once(tmp_path, model, monkeypatch, caplog, where):
    cache = cache_with(tmp_path, model, monkeypatch)
    repo = "models--other--hidden"
    bad = cache_with(tmp_path, model, monkeypatch, repo) / repo
    target = {
        "repo": bad,
        "snapshots": bad / "snapshots",
        "snapshot": bad / "snapshots" / "abc",
        "inside": bad / "snapshots" / "abc",
    }[where]
    deny(monkeypatch, target)
    with caplog.at_level(logging.WARNING, logger="attention_explorer.models"):
        first = ae.models()
        second = ae.models()
    ids = [m.id for m in first]
    assert "someone/tiny" in ids and "other/hidden" not in ids
    assert [m.id for m in second] == ids
    skipped = [r for r in caplog.records if "skipped" in r.getMessage()]
    assert 1 <= len(skipped) <= 2 and "permission denied" in skipped[0].getMessage()
    assert cache.exists()


def test_a_saved_session_opens_and_saves_beside_an_unreadable_repo(tmp_path, model, monkeypatch):
    cache = cache_with(tmp_path, model, monkeypatch)
    session = ae.from_model("someone/tiny", "the cat sat", layer=1)
    x = np.array(session.inputs.X)
    x[0, 0] += 1.0
    edited = session.with_changes(inputs=session.inputs.with_array("X", x))
    shutil.copytree(model, cache / "models--zz--locked" / "snapshots" / "s1")
    deny(monkeypatch, cache / "models--zz--locked")
    path = ae.save(edited, tmp_path / "s.json")
    assert '"model"' in path.read_text()  # saved by reference, not standalone
    again = ae.load(path)
    assert np.array_equal(again.inputs.X, x)


def test_a_session_whose_model_folder_cannot_be_read_says_so(tmp_path, model, monkeypatch):
    session = ae.from_model(model, "the cat", layer=0)
    path = ae.save(session, tmp_path / "s.json")
    deny(monkeypatch, model)
    with pytest.raises(SessionFileError) as err:
        ae.load(path)
    assert "cannot be read: permission denied" in str(err.value)
    assert str(model) in str(err.value)


def test_a_model_folder_that_cannot_be_read_is_one_line(model, monkeypatch):
    deny(monkeypatch, model)
    with pytest.raises(ModelError) as err:
        ae.from_model(model, "the cat")
    assert "permission denied" in str(err.value) and str(model) in str(err.value)
