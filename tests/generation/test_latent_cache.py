"""Generation over DeepSeek-V3's latent cache: each layer caches, per position, the normed
latent ``c_kv [kv_lora]`` and the rotary key ``k_pe [rope]`` (after RoPE) and nothing else.
Greedy ids are transformers' ``generate(do_sample=False)`` (float64, its float32 steps
patched), every step's rows are the last row of a full model run over the same tokens, the
latent cache equals transformers' cache (which holds exactly the latent and the rotary key),
the up-projected keys and values given for the views are the model run's, and the bytes
reported are the latent's.

The steps are run with the generation's own pieces (``decode.held``, ``step.new_caches``,
``decode.forward_new``, ``decode.layer_caches``: what ``Stepper.step`` runs)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.generation.decode import embed_at, forward_new, held, layer_caches
from attention_explorer.generation.policy import parse_policy
from attention_explorer.generation.step import new_caches, widths
from attention_explorer.pretrained.forward import embed
from attention_explorer.pretrained.open_model import load_model, model_backend
from tests.generation.conftest import run_over_ids

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PROMPT = "The cat sat on the mat"
STEPS = 5


def greedy(folder, steps, backend="numpy", dtype="float64", policy=None):
    """``steps`` greedy tokens after :data:`PROMPT`: (ids, rows per step [layers, heads, m],
    the caches as ``layer_caches`` returns them)."""
    loaded = load_model(folder)
    engine = model_backend(backend)
    w = held(loaded, dtype, engine)
    toks = loaded.tokenize(PROMPT)
    n, capacity = len(toks.ids), len(toks.ids) + steps - 1
    d_k, d_v = widths(w)
    sizes = {"layers": w.n_layers, "kv_heads": w.kv_heads, "positions": capacity}
    policy = parse_policy(policy, sizes | {"d_k": d_k, "d_v": d_v})
    h = embed(w, toks.ids, toks.type_ids, np.dtype(dtype))  # [n, d]
    if engine.name == "torch":
        h = torch.as_tensor(h)
    caches = new_caches(w, capacity, h)
    ids, rows = list(toks.ids), []
    for i in range(steps):
        if i:
            h = embed_at(w, ids[-1], len(ids) - 1, np.dtype(dtype))  # [1, d]
        step_rows, logits = forward_new(w, h, caches, policy)
        rows.append(np.stack([np.asarray(r) for r in step_rows]))  # [layers, heads, m]
        ids.append(int(np.argmax(np.asarray(logits)[0])))
    return ids, rows, layer_caches(w, caches, policy, capacity), n


def hf_generate(folder, prompt_ids, steps):
    """transformers' float64 greedy ids and its cache (exact float64 steps)."""
    from tests.models import exact_reference

    model = exact_reference.load_float64(folder)
    with exact_reference.exact_float64(), torch.no_grad():
        out = model.generate(
            torch.tensor([prompt_ids]),
            max_new_tokens=steps,
            do_sample=False,
            return_dict_in_generate=True,
        )
    return out.sequences[0].tolist(), out.past_key_values


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_greedy_ids_and_the_latent_cache_are_transformers(deepseek_gen, backend):
    ids, _, cache, n = greedy(deepseek_gen, STEPS, backend)
    theirs, past = hf_generate(deepseek_gen, ids[:n], STEPS)
    assert ids == theirs
    for layer, held_layer in enumerate(cache):
        # transformers caches the latent as the layer's "keys", the rotary key as "values"
        latent, rope_key = past.layers[layer].keys[0, 0], past.layers[layer].values[0, 0]
        assert held_layer.latent.shape == (n + STEPS - 1, 16) == tuple(latent.shape)
        assert held_layer.rope_key.shape == (n + STEPS - 1, 8) == tuple(rope_key.shape)
        assert np.abs(held_layer.latent - latent.numpy()).max() < 1e-6
        assert np.abs(held_layer.rope_key - rope_key.numpy()).max() < 1e-6


def test_every_step_is_the_last_row_of_a_full_run(deepseek_gen):
    ids, rows, cache, n = greedy(deepseek_gen, STEPS)
    for i, step_rows in enumerate(rows):
        run = run_over_ids(deepseek_gen, ids[: n + i])
        assert np.abs(step_rows - run.attentions[:, :, -1, :]).max() < 1e-6
    assert np.allclose(rows[-1].sum(axis=-1), 1.0)


def test_the_views_keys_and_values_are_the_up_projected_latents(deepseek_gen):
    from attention_explorer.pretrained.latent.view import latent_view

    ids, _, cache, n = greedy(deepseek_gen, 3)
    fed = ids[: n + 2]
    run_over_ids(deepseek_gen, fed)  # puts the ids' tokens under their key
    key = "\x00ids:" + ",".join(map(str, fed))
    loaded = load_model(deepseek_gen)
    for layer in (0, 1):
        view = latent_view(loaded, key, layer)
        held_layer = cache[layer]
        assert np.abs(held_layer.latent - view.c_kv).max() < 1e-9
        assert np.abs(held_layer.rope_key - view.k_pe).max() < 1e-9
        assert np.abs(held_layer.keys - view.key).max() < 1e-9  # [heads, m, nope + rope]
        assert np.abs(held_layer.values - view.value).max() < 1e-9
        assert held_layer.kv_group == 1  # a key and a value for every head


def test_the_bytes_are_the_latents(deepseek_gen):
    _, _, cache, n = greedy(deepseek_gen, 4)
    m = n + 3
    layer = cache[0]
    assert layer.bytes_per_position == (16 + 8) * 8  # kv_lora + rope, float64
    assert layer.nbytes == m * (16 + 8) * 8 == layer.latent.nbytes + layer.rope_key.nbytes
    full = layer.keys.nbytes + layer.values.nbytes  # what multi-head attention would hold
    assert full == m * 4 * (16 + 12) * 8 and layer.nbytes * 4 < full


def test_a_window_policy_hides_latent_positions(deepseek_gen):
    ids, rows, cache, n = greedy(deepseek_gen, 3, policy={"sinks": 1, "window": 3})
    last = rows[-1]  # [layers, heads, m]
    m = last.shape[-1]
    assert np.all(last[:, :, 1 : m - 3] == 0.0) and np.all(last[:, :, 0] > 0)
    assert np.allclose(last.sum(axis=-1), 1.0)
    assert list(cache[0].positions) == [0, *range(m - 2, m)]
    assert cache[0].latent.shape == (3, 16)
