"""The model run's contract beyond parity: reuse from the edited layer, clear errors for
heads and edits that do not exist, read-outs of the output, and the offline model list."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.pretrained import ModelError, from_model, model_run, models


def test_reuse_recomputes_from_the_edited_layer_only(gpt2_folder):
    text = "the cat watched the dog"
    base = model_run(gpt2_folder, text, dtype="float64")
    session = from_model(gpt2_folder, text, layer=2)
    W_Q = np.array(session.inputs.W_Q)
    W_Q[0, 0] += 2.0
    edits = {2: session.with_changes(inputs=replace(session.inputs, W_Q=W_Q))}
    seen = []
    reused = model_run(
        gpt2_folder,
        text,
        edits=edits,
        dtype="float64",
        reuse=base,
        progress=lambda done, total: seen.append(done),
    )
    full = model_run(gpt2_folder, text, edits=edits, dtype="float64")
    assert reused.recomputed_from == 2 and full.recomputed_from == 0 and seen == [3]
    np.testing.assert_allclose(reused.attentions, full.attentions, rtol=0, atol=1e-12)
    np.testing.assert_allclose(reused.logits, full.logits, rtol=0, atol=1e-12)
    assert np.abs(reused.attentions[2] - base.attentions[2]).max() > 1e-6
    again = model_run(gpt2_folder, text, edits=edits, dtype="float64", reuse=reused)
    assert again.recomputed_from == 3  # nothing changed: only the output is reused
    other_text = model_run(gpt2_folder, "the dog", dtype="float64", reuse=base)
    assert other_text.recomputed_from == 0


def test_a_session_left_unedited_gives_the_plain_run(gpt2_folder):
    text = "the cat sat"
    plain = model_run(gpt2_folder, text, dtype="float64")
    same = model_run(
        gpt2_folder, text, dtype="float64", edits={1: from_model(gpt2_folder, text, layer=1)}
    )
    np.testing.assert_allclose(same.hidden, plain.hidden, rtol=0, atol=1e-12)


@pytest.mark.parametrize("bad", [(3, 0), (0, 4), (-1, 0), ("0", 1), (0,), 7, (True, 0)])
def test_knocking_out_a_head_that_does_not_exist(gpt2_folder, bad):
    with pytest.raises(ModelError) as err:
        model_run(gpt2_folder, "the cat", knockout=[bad])
    assert err.value.what == "knockout"
    assert "layers 0..2 and heads 0..3" in str(err.value)


def test_edits_that_do_not_fit(gpt2_folder):
    session = from_model(gpt2_folder, "the cat sat", layer=0)
    with pytest.raises(ModelError, match="no layer 5"):
        model_run(gpt2_folder, "the cat sat", edits={5: session})
    with pytest.raises(ModelError, match="same model and text"):
        model_run(gpt2_folder, "the dog sat on the mat", edits={0: session})
    with pytest.raises(ModelError, match="must be a session"):
        model_run(gpt2_folder, "the cat sat", edits={0: "W_Q"})
    with pytest.raises(ModelError, match="dtype"):
        model_run(gpt2_folder, "the cat sat", dtype="float16")


def test_knockout_is_the_same_as_zeroing_the_heads_rows_of_W_O(gpt2_folder):
    text = "the cat watched the dog"
    knocked = model_run(gpt2_folder, text, knockout=[(1, 2)], dtype="float64")
    session = from_model(gpt2_folder, text, layer=1)
    W_O = np.array(session.inputs.W_O)
    W_O[16:24] = 0.0  # d_k = 8: rows of head 2
    zeroed = model_run(
        gpt2_folder,
        text,
        dtype="float64",
        edits={1: session.with_changes(inputs=replace(session.inputs, W_O=W_O))},
    )
    np.testing.assert_allclose(knocked.logits, zeroed.logits, rtol=0, atol=1e-12)
    assert knocked.knockout == ((1, 2),)


def test_output_read_outs(gpt2_folder, minilm_folder):
    run = model_run(gpt2_folder, "the cat watched the dog", dtype="float64")
    lp = run.log_probs()
    assert lp.shape == (run.logits.shape[1],) and abs(np.exp(lp).sum() - 1) < 1e-12
    top = run.top_tokens(k=5)
    assert len(top) == 5 and top[0][2] >= top[-1][2] and isinstance(top[0][0], str)
    strip = run.next_token_log_probs()
    assert strip.shape == (len(run.ids) - 1,) and np.all(strip <= 0)
    assert strip[0] == pytest.approx(run.log_probs(0)[run.ids[1]])
    with pytest.raises(ModelError, match="outside the text"):
        run.log_probs(99)
    embedder = model_run(minilm_folder, "the cat sat")
    assert embedder.logits is None and "no output head" in embedder.output_note
    with pytest.raises(ModelError, match="no output head"):
        embedder.log_probs()
    assert embedder.embedding().shape == (384,)


def test_models_lists_packaged_folders_and_the_hub_cache(
    tmp_path, monkeypatch, gpt2_folder, minilm_folder
):
    cache = tmp_path / "hub"
    snap = cache / "models--someone--tiny-gpt2" / "snapshots" / "abc123"
    shutil.copytree(gpt2_folder, snap)
    gemma = tmp_path / "mine" / "gemma"
    shutil.copytree(gpt2_folder, gemma)
    config = json.loads((gemma / "config.json").read_text())
    (gemma / "config.json").write_text(json.dumps({**config, "model_type": "gemma"}))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    found = {entry.id: entry for entry in ae.models([tmp_path / "mine"])}
    assert found["all-MiniLM-L6-v2"].where == "package"
    assert found["all-MiniLM-L6-v2"].family == "bert"
    cached = found["someone/tiny-gpt2"]
    assert cached.where == "hf-cache" and cached.family == "gpt2" and cached.path == snap
    assert found[str(gemma)].family == "gemma" and not found[str(gemma)].supported
    assert model_run("someone/tiny-gpt2", "the cat").logits is not None
    assert models() == [e for e in models() if e.where != "folder"]


def test_the_api_functions():
    assert "model_run" in ae.API and "models" in ae.API
    run = ae.model_run("all-MiniLM-L6-v2", "hello world", knockout=[(0, 0)])
    assert run.tokens == ("[CLS]", "hello", "world", "[SEP]") and run.knockout == ((0, 0),)


def test_torch_backend_gives_the_same_run(gpt2_folder):
    pytest.importorskip("torch")
    text = "the cat watched the dog"
    session = from_model(gpt2_folder, text, layer=1)
    edits = {1: session}
    on_numpy = model_run(gpt2_folder, text, edits=edits, knockout=[(2, 0)], dtype="float64")
    on_torch = model_run(
        gpt2_folder, text, edits=edits, knockout=[(2, 0)], dtype="float64", backend="torch"
    )
    assert on_torch.backend == "torch"
    np.testing.assert_allclose(on_torch.attentions, on_numpy.attentions, rtol=0, atol=1e-12)
    np.testing.assert_allclose(on_torch.logits, on_numpy.logits, rtol=0, atol=1e-10)


def test_bundled_models_are_found_by_id(tmp_path, monkeypatch, gpt2_folder):
    from attention_explorer.pretrained.checkpoint import available, source

    shutil.copytree(gpt2_folder, tmp_path / "models" / "tiny-test")
    monkeypatch.setattr(source, "bundled_root", lambda: tmp_path / "models")
    monkeypatch.setattr(available, "bundled_root", lambda: tmp_path / "models")
    entry = next(e for e in ae.models() if e.id == "tiny-test")
    assert entry.where == "bundled" and entry.family == "gpt2"
    assert source.resolve_model("tiny-test") == tmp_path / "models" / "tiny-test"


def test_predicted_tokens_read_as_the_token_strip_shows_them(gpt2_folder):
    run = model_run(gpt2_folder, "the cat watched the dog", dtype="float64")
    top = run.top_tokens(k=len(run.model.tokenizer.get_vocab()))
    shown = {name for name, _, _ in top}
    assert not any(name.startswith("Ġ") for name in shown)  # byte-level marks are decoded
    assert set(run.tokens) <= shown | {""}
    cat = run.tokens[1]  # "cat", read from the piece "Ġcat"
    assert run.token_id(cat) == run.ids[1]
