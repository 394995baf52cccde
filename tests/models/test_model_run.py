"""The model run against transformers (eager, float64): attentions, hidden states and logits
to 1e-6 on the real MiniLM and on random GPT-2 and BERT-MLM checkpoints, also with a W_Q
cell edited in one layer (in both) and with a head knocked out (its W_O rows zeroed in
transformers); on numpy and on torch (``backend="torch"``, its own forward pass)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attention_explorer.pretrained import ModelError, from_model, load_model, model_run

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TOL = 1e-6
EDIT_LAYER, ROW, COL, DELTA = 1, 3, 5, 0.75
KNOCK = (0, 1)  # (layer, head)


def _linear(module, kind):
    """(weight, math_of(row, col) -> weight index) for a Linear ([out, in]) or Conv1D."""
    if kind == "conv1d":
        return module.weight, lambda r, c: (r, c)
    return module.weight, lambda r, c: (c, r)


def reference(folder, ids, cls, parts, edit=False, knock=False):
    """transformers' (attentions, hidden states, logits or None), eager float64."""
    model = cls.from_pretrained(str(folder), attn_implementation="eager", dtype=torch.float64)
    model.eval()
    layers, query_of, out_of, kind, d_k = parts(model)
    with torch.no_grad():
        if edit:
            weight, at = _linear(query_of(layers[EDIT_LAYER]), kind)
            weight[at(ROW, COL)] += DELTA
        if knock:
            layer, head = KNOCK
            weight = out_of(layers[layer]).weight  # rows of W_O in math orientation
            cols = slice(head * d_k, (head + 1) * d_k)
            if kind == "conv1d":
                weight[cols, :] = 0.0
            else:
                weight[:, cols] = 0.0
        out = model(
            input_ids=torch.tensor([ids]), output_attentions=True, output_hidden_states=True
        )
    attentions = np.stack([a[0].numpy() for a in out.attentions])
    hidden = np.stack([h[0].numpy() for h in out.hidden_states])
    logits = out.logits[0].numpy() if hasattr(out, "logits") else None
    return attentions, hidden, logits, model


def edited_session(folder, text):
    session = from_model(folder, text, layer=EDIT_LAYER)
    W_Q = np.array(session.inputs.W_Q)
    if session.config.heads and W_Q.shape[1] > COL:
        W_Q[ROW, COL] += DELTA
    return session.with_changes(inputs=replace(session.inputs, W_Q=W_Q))


def compare(run, ref, final_norm=None):
    attentions, hidden, logits, _ = ref
    np.testing.assert_allclose(run.attentions, attentions, rtol=0, atol=TOL)
    ours = run.hidden
    if final_norm is not None:  # transformers' last hidden state is after the final norm
        ours = ours.copy()
        ours[-1] = final_norm(ours[-1])
    np.testing.assert_allclose(ours, hidden, rtol=0, atol=TOL)
    if logits is None:
        assert run.logits is None
    else:
        np.testing.assert_allclose(run.logits, logits, rtol=0, atol=TOL)


def bert_parts(model):
    base = getattr(model, "bert", model)
    d_k = base.config.hidden_size // base.config.num_attention_heads
    return (
        base.encoder.layer,
        lambda layer: layer.attention.self.query,
        lambda layer: layer.attention.output.dense,
        "linear",
        d_k,
    )


def gpt2_parts(model):
    base = model.transformer
    d_k = base.config.n_embd // base.config.n_head
    return base.h, lambda block: block.attn.c_attn, lambda block: block.attn.c_proj, "conv1d", d_k


def gpt2_final_norm(folder):
    from attention_explorer.pretrained.forward import norm

    w = load_model(folder).weights
    return lambda h: norm(w, h, w.head.norm)


CASES = {
    "plain": {},
    "edit": {"edit": True},
    "knockout": {"knock": True},
    "both": {"edit": True, "knock": True},
}


#: torch on a GPU too where one is found (the device checks); CI has none.
BACKENDS = ("numpy", "torch") + (("torch:cuda",) if torch.cuda.is_available() else ())


def run_case(folder, text, case, backend="numpy"):
    opts = CASES[case]
    edits = {EDIT_LAYER: edited_session(folder, text)} if opts.get("edit") else None
    knockout = [KNOCK] if opts.get("knock") else None
    run = model_run(folder, text, edits=edits, knockout=knockout, dtype="float64", backend=backend)
    assert run.backend == backend
    return run, opts


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_minilm_matches_transformers(minilm_folder, case, backend):
    text = "The cat sat on the mat because it was tired."
    run, opts = run_case(minilm_folder, text, case, backend)
    assert run.attentions.shape == (6, 12, 13, 13) and run.hidden.shape == (7, 13, 384)
    ref = reference(minilm_folder, list(run.ids), transformers.AutoModel, bert_parts, **opts)
    compare(run, ref)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_random_gpt2_matches_transformers(gpt2_folder, case, backend):
    text = "the cat watched the dog sat on the mat"
    run, opts = run_case(gpt2_folder, text, case, backend)
    ref = reference(gpt2_folder, list(run.ids), transformers.GPT2LMHeadModel, gpt2_parts, **opts)
    compare(run, ref, gpt2_final_norm(gpt2_folder))
    assert run.logits.shape == (len(run.ids), load_model(gpt2_folder).weights.vocab)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_random_bert_mlm_matches_transformers(bert_folder, case, backend):
    text = "the cat sat on the [MASK]"
    run, opts = run_case(bert_folder, text, case, backend)
    assert "[MASK]" in run.tokens
    ref = reference(bert_folder, list(run.ids), transformers.BertForMaskedLM, bert_parts, **opts)
    compare(run, ref)


def test_edit_and_knockout_really_change_the_later_layers(gpt2_folder):
    text = "the cat watched the dog"
    base = model_run(gpt2_folder, text, dtype="float64")
    edited, _ = run_case(gpt2_folder, text, "edit")
    np.testing.assert_array_equal(edited.attentions[:EDIT_LAYER], base.attentions[:EDIT_LAYER])
    assert (
        np.abs(edited.attentions[EDIT_LAYER + 1 :] - base.attentions[EDIT_LAYER + 1 :]).max() > 1e-3
    )
    assert np.abs(edited.logits - base.logits).max() > 1e-3
    knocked = model_run(gpt2_folder, text, knockout=[KNOCK], dtype="float64")
    assert np.abs(knocked.logits - base.logits).max() > 1e-3


def test_float32_agrees_with_float64(minilm_folder, gpt2_folder):
    for folder in (minilm_folder, gpt2_folder):
        r32 = model_run(folder, "the cat sat on the mat")
        r64 = model_run(folder, "the cat sat on the mat", dtype="float64")
        assert r32.attentions.dtype == np.float32 and r64.hidden.dtype == np.float64
        np.testing.assert_allclose(r32.attentions, r64.attentions, atol=1e-4)
        np.testing.assert_allclose(r32.hidden, r64.hidden, atol=2e-3 * np.abs(r64.hidden).max())


def test_threads_are_every_core_or_a_positive_count(gpt2_folder):
    alone = model_run(gpt2_folder, "the cat sat on the mat")
    one = model_run(gpt2_folder, "the cat sat on the mat", threads=1)
    np.testing.assert_allclose(one.logits, alone.logits, rtol=1e-5, atol=1e-5)
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(ModelError, match="threads must be None"):
            model_run(gpt2_folder, "the cat sat", threads=bad)


def test_a_models_latest_texts_keep_their_tokens(gpt2_folder):
    from attention_explorer.pretrained.open_model import TEXTS_KEPT

    loaded = load_model(gpt2_folder)
    first = loaded.tokenize("the cat sat")
    assert loaded.tokenize("the cat sat") is first  # kept: not tokenized again
    for i in range(TEXTS_KEPT):
        loaded.tokenize(f"the cat sat {i}")
    again = loaded.tokenize("the cat sat")
    assert again is not first and again == first  # pushed out by newer texts, same tokens
    kept = [k for k in loaded.cast if isinstance(k, tuple) and k[0] == "tokens"]
    assert len(kept) == TEXTS_KEPT
    with pytest.raises(ModelError, match="empty"):
        loaded.tokenize("   ")
