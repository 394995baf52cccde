"""Issue 32, item 6: numbers never change on reopen. A config edited between ``from_model``
and ``ae.save`` is seen (the model cache is keyed on every file read: config.json's bytes,
tokenizer.json), so the save compares with the model as it is now and reopening gives the
saved numbers, exact to the bit."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.pretrained import load_model


def edit(session, row=0, col=0, by=1.0):
    x = np.array(session.inputs.X)
    x[row, col] += by
    return session.with_changes(inputs=session.inputs.with_array("X", x))


@pytest.mark.parametrize("same_size", [False, True])
def test_a_config_changed_before_saving_reopens_the_saved_numbers(model, tmp_path, same_size):
    session = edit(ae.from_model(model, "the cat sat on the mat", layer=1))
    config = json.loads((model / "config.json").read_text())
    stat = (model / "config.json").stat()
    config["layer_norm_epsilon"] = 0.5 if not same_size else 9e-05  # 1e-05 -> same length
    (model / "config.json").write_text(json.dumps(config))
    if same_size:  # the same size and time: only the bytes tell
        os.utime(model / "config.json", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    path = ae.save(session, tmp_path / "s.json")
    again = ae.load(path)
    assert np.array_equal(again.inputs.X, session.inputs.X)
    assert np.array_equal(again.inputs.W_Q, session.inputs.W_Q)


def test_a_tokenizer_changed_is_read_again(model):
    first = load_model(model)
    from hostile_files import word_tokenizer

    word_tokenizer(model / "tokenizer.json")  # rewritten: a new inode and time
    assert load_model(model) is not first
    assert load_model(model) is load_model(model)
