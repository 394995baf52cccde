"""The worked examples: every file loads and computes, and each shows what it claims."""

import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.engine import AttentionInputError, compute
from attention_explorer.session.examples import (
    ExampleInfo,
    example_path,
    list_examples,
    load_example,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples"
KEYS = sorted(p.stem for p in EXAMPLES.glob("*.json"))
CHECKPOINT_KEYS = [k for k in KEYS if k.startswith("checkpoint-")]


def run(key, dtype="float64", **changes):
    """Load example ``key``, apply config ``changes`` (an experiment's "try"), compute."""
    data = load_example(key)
    config = data.config.with_changes(**changes) if changes else data.config
    return compute(data.inputs, config, dtype=dtype, tokens=data.tokens, kv_tokens=data.kv_tokens)


def weights(key, head=0, **changes):
    return run(key, **changes).stage("weights", head)


def outputs(key, head=0, **changes):
    return run(key, **changes).stage("head_outputs", head)


# -- the catalogue -----------------------------------------------------------------------------
def test_required_examples_are_shipped():
    required = {
        "three-tokens",
        "pytorch-toy",
        "pytorch-toy-multihead",
        "i-love-pizza",
        "i-love-pizza-two-heads",
        "hindi-decoder",
        "why-scale-unscaled",
        "why-scale-scaled",
        "scale-dk-4",
        "scale-dk-64",
        "causal-mask",
        "padding-mask",
        "checkpoint-similar-keys",
        "checkpoint-dominant-score",
        "checkpoint-equal-scores",
        "checkpoint-masked-token",
        "checkpoint-near-zero-query",
        "checkpoint-identical-embeddings",
        "checkpoint-heads-not-dividing",
    }
    assert required <= set(KEYS)


def test_list_examples_is_grouped_and_complete():
    infos = list_examples()
    assert all(isinstance(i, ExampleInfo) for i in infos)
    assert sorted(i.key for i in infos) == KEYS
    groups = [i.group for i in infos]
    seen = list(dict.fromkeys(groups))
    assert seen[:4] == ["Tutorial examples", "Why scale", "Masks", "Checkpoint experiments"]
    # each group is one contiguous block, so the menu shows it once
    assert groups == sorted(groups, key=seen.index)
    assert infos[0].key == "three-tokens"
    for info in infos:
        assert info.title and info.summary and info.summary.endswith(".")
        assert info.title == load_example(info.key).name


def test_unknown_key_lists_the_known_ones():
    with pytest.raises(KeyError) as err:
        load_example("no-such-example")
    assert "three-tokens" in str(err.value) and "no-such-example" in str(err.value)
    for bad in ("../pyproject", "three-tokens.json", ""):
        with pytest.raises(KeyError):
            example_path(bad)


def test_example_path_points_at_the_shipped_file():
    path = example_path("pytorch-toy")
    assert path.is_file() and path.name == "pytorch-toy.json"
    assert json.loads(path.read_text(encoding="utf-8"))["name"] == load_example("pytorch-toy").name


# -- every file --------------------------------------------------------------------------------
@pytest.mark.parametrize("key", KEYS)
def test_every_example_loads_validates_and_computes(key):
    data = load_example(key)
    trace = compute(data.inputs, data.config, tokens=data.tokens, kv_tokens=data.kv_tokens)
    assert trace.tokens == data.tokens
    for h in range(data.config.heads):
        w = trace.stage("weights", h)
        assert np.all(np.isfinite(w)) and np.all(w >= 0)
        np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(np.isfinite(trace["concat"]))
    exp = data.experiment
    assert isinstance(exp.get("group"), str) and isinstance(exp.get("order"), int)
    # from a model, not a tutorial
    from_models = ("minilm-it-cat", "tiny-induction-copy", "tiny-induction-patching")
    # positions-*, variants-* (issue 28) and kv-cache-* (issue 30) are seeded, notes computed
    if key not in from_models and not key.startswith(("positions-", "variants-", "kv-cache-")):
        assert exp.get("source", "").startswith("“")  # “tutorial title”, section
    for note in data.notes:
        assert note[0] and note[1]


@pytest.mark.parametrize("key", CHECKPOINT_KEYS)
def test_checkpoints_ask_a_question_and_say_what_to_see(key):
    exp = load_example(key).experiment
    assert exp["question"].endswith("?") and len(exp["expect"]) > 20


@pytest.mark.parametrize("key", [k for k in KEYS if "try" in load_example(k).experiment])
def test_every_try_is_a_valid_change_or_the_heads_refusal(key):
    data = load_example(key)
    changes = data.experiment["try"]
    config = data.config.with_changes(**changes)
    if key == "checkpoint-heads-not-dividing":
        with pytest.raises(AttentionInputError):
            config.validate(len(data.tokens), len(data.key_tokens))
    else:
        config.validate(len(data.tokens), len(data.key_tokens))
        assert config != data.config
        compute(data.inputs, config)


# -- tutorial numbers --------------------------------------------------------------------------
def test_three_tokens():
    t = run("three-tokens")
    np.testing.assert_array_equal(t.stage("scores", 0), [[1, 1, 0], [1, 2, 1], [0, 1, 1]])
    np.testing.assert_allclose(t.stage("scaled", 0)[1], [0.707, 1.414, 0.707], atol=5e-4)
    # seed 001 §4 says "approximately [0.25, 0.5, 0.25]": right to 2 decimals only
    np.testing.assert_allclose(t.stage("weights", 0)[1], [0.248255, 0.503490, 0.248255], atol=1e-6)
    # seed 001 §4 prints [1.25, 2.25] (from the rounded weights); exact is [1.2413, 2.2552]
    np.testing.assert_allclose(t.stage("head_outputs", 0)[1], [1.241275, 2.255235], atol=1e-6)
    notes = " ".join(text for _, text in load_example("three-tokens").notes)
    assert "[0.2483, 0.5035, 0.2483]" in notes and "[1.2413, 2.2552]" in notes


TOY_WEIGHTS = [
    [0.2352, 0.2783, 0.2205, 0.2659],
    [0.2094, 0.3100, 0.2795, 0.2011],
    [0.3360, 0.2504, 0.2338, 0.1797],
    [0.3234, 0.2881, 0.2501, 0.1385],
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pytorch_toy_weights_equal_the_printed_matrix(dtype):
    # seed 000 §4.4 prints the 4 x 4 weights to 4 decimals
    w = run("pytorch-toy", dtype=dtype).stage("weights", 0)
    np.testing.assert_array_equal(np.round(w.astype(np.float64), 4), TOY_WEIGHTS)
    data = load_example("pytorch-toy")
    assert data.config.mode == "projection" and data.config.head_dim == 8
    assert data.inputs.X.shape == (4, 16) and data.inputs.W_Q.shape == (16, 8)
    # the first embedding row as the tutorial prints it
    np.testing.assert_allclose(data.inputs.X[0, :4], [0.3374, -0.1778, -0.3035, -0.5880], atol=5e-5)


def test_pytorch_toy_multihead_shapes_and_output_projection():
    data = load_example("pytorch-toy-multihead")
    assert data.config.heads == 4 and data.config.head_dim == 4 and data.config.d_k is None
    t = run("pytorch-toy-multihead")
    assert t["Q"].shape == (4, 4, 4) and t["scores"].shape == (4, 4, 4)
    assert t["head_outputs"].shape == (4, 4, 4)
    assert t["concat"].shape == (4, 16) and t["output"].shape == (4, 16)
    np.testing.assert_allclose(t["output"], t["concat"] @ data.inputs.W_O, atol=1e-12)
    # same embeddings as the single-head toy: one seeded stream
    np.testing.assert_array_equal(data.inputs.X, load_example("pytorch-toy").inputs.X)


def test_pizza_single_head():
    data = load_example("i-love-pizza")
    assert data.config.scale == "none"  # seed 004 softmaxes raw scores
    t = run("i-love-pizza")
    np.testing.assert_array_equal(t.stage("scores", 0)[1], [2, 5, 2])
    np.testing.assert_allclose(t.stage("weights", 0)[1], [0.045, 0.91, 0.045], atol=5e-3)
    # seed 004 prints [1.87, 1.00]; exact is [1.8642, 1.0]
    np.testing.assert_allclose(t.stage("head_outputs", 0)[1], [1.864164, 1.0], atol=1e-6)
    np.testing.assert_array_equal(data.inputs.Q, data.inputs.K)
    np.testing.assert_array_equal(data.inputs.K, data.inputs.V)


def test_pizza_two_heads_and_concatenation():
    t = run("i-love-pizza-two-heads")
    np.testing.assert_array_equal(t.stage("scores", 0)[0], [2, 3, 1])
    np.testing.assert_array_equal(t.stage("scores", 1)[0], [3, 4, 10])
    # seed 004 prints [0.24, 0.66, 0.10] and [1.56, 0.76] for head 1: both slightly off
    np.testing.assert_allclose(t.stage("weights", 0)[0], [0.244728, 0.665241, 0.090031], atol=1e-6)
    np.testing.assert_allclose(t.stage("weights", 1)[0], [0.001, 0.002, 0.997], atol=5e-4)
    # seed 004 prints [1.56, 0.76, 4.99, 4.99]; exact is [1.5752, 0.7553, 4.9890, 4.9840]
    np.testing.assert_allclose(t["concat"][0], [1.575210, 0.755272, 4.988954, 4.984013], atol=1e-6)


def test_pizza_supposed_scores():
    w = weights("i-love-pizza-supposed-scores")
    np.testing.assert_allclose(w[0], [0.002, 0.98, 0.018], atol=5e-4)
    # seed 004 prints [0.1, 0.02, 0.88] for scores [5, 2, 9]; the softmax is:
    np.testing.assert_allclose(w[1], [0.017970, 0.000895, 0.981135], atol=1e-6)


def test_hindi_decoder_is_unscaled_cross_attention():
    data = load_example("hindi-decoder")
    assert data.config.attention == "cross" and data.config.scale == "none"
    assert len(data.kv_tokens) == 4 and data.kv_tokens[0].startswith("h1")
    t = run("hindi-decoder")
    np.testing.assert_array_equal(t.stage("scores", 0), [[3, 8, 8, 7], [6, 16, 16, 14]])
    # seed 004 prints [0.003, 0.45, 0.45, 0.097] and context [2.35, 3.19]; both are off
    np.testing.assert_allclose(
        t.stage("weights", 0)[0], [0.002837, 0.421120, 0.421120, 0.154922], atol=1e-6
    )
    np.testing.assert_allclose(t.stage("head_outputs", 0)[0], [2.263361, 3.304168], atol=1e-6)
    notes = " ".join(text for _, text in data.notes)
    assert "[0.0028, 0.4211, 0.4211, 0.1549]" in notes and "[2.2634, 3.3042]" in notes


def test_hindi_supposed_scores_give_true_weights_and_contexts():
    t = run("hindi-decoder-supposed-scores")
    np.testing.assert_array_equal(t.stage("scores", 0), [[3, 8, 8, 7], [2, 9, 6, 1], [1, 2, 10, 3]])
    w = t.stage("weights", 0)
    # seed 004 prints [0.001, 0.90, 0.09, 0.009] and [0.001, 0.01, 0.97, 0.019]
    np.testing.assert_allclose(w[1], [0.000868, 0.951444, 0.047370, 0.000319], atol=1e-6)
    np.testing.assert_allclose(w[2], [0.000123, 0.000335, 0.998631, 0.000911], atol=1e-6)
    H = np.array([[1, 1], [3, 2], [2, 4], [1, 5]])
    np.testing.assert_allclose(t.stage("head_outputs", 0), w @ H, atol=1e-12)


# -- why scale ---------------------------------------------------------------------------------
def test_why_scale_pair_shares_data_and_differs_only_in_scale():
    a, b = load_example("why-scale-unscaled"), load_example("why-scale-scaled")
    assert a.inputs == b.inputs and a.config.with_changes(scale="sqrt_dk") == b.config
    assert a.inputs.Q.shape == (1, 1, 64) and a.inputs.K.shape == (1, 6, 64)
    raw, soft = weights("why-scale-unscaled")[0], weights("why-scale-scaled")[0]
    assert raw.max() > 0.98 and soft.max() < 0.5  # one key dominates only without scaling
    # the "try" of each file turns it into the other
    np.testing.assert_allclose(weights("why-scale-unscaled", scale="sqrt_dk")[0], soft)


def test_score_8_at_dk4_and_32_at_dk64_both_scale_to_4():
    small, large = run("scale-dk-4"), run("scale-dk-64")
    np.testing.assert_array_equal(small.stage("scores", 0)[0], [8, 4, 0])
    np.testing.assert_array_equal(large.stage("scores", 0)[0], [32, 16, 0])
    np.testing.assert_allclose(small.stage("scaled", 0)[0], [4, 2, 0])
    np.testing.assert_allclose(large.stage("scaled", 0)[0], [4, 2, 0])
    np.testing.assert_allclose(small.stage("weights", 0), large.stage("weights", 0))
    # unscaled (the experiment), d_k = 64 leaves practically nothing to the other keys
    assert weights("scale-dk-4", scale="none")[0, 0] == pytest.approx(0.9817, abs=1e-4)
    assert weights("scale-dk-64", scale="none")[0, 0] > 1 - 1e-6


# -- masks -------------------------------------------------------------------------------------
def test_causal_mask():
    w = weights("causal-mask")
    assert np.all(w[np.triu_indices(3, 1)] == 0)
    np.testing.assert_allclose(w[1, :2], [0.330238, 0.669762], atol=1e-6)
    assert np.all(weights("causal-mask", mask="none")[np.triu_indices(3, 1)] > 0)


def test_padding_mask():
    w = weights("padding-mask")
    assert np.all(w[:, 3] == 0)
    np.testing.assert_allclose(w[:3, :3], weights("three-tokens"), atol=1e-12)
    np.testing.assert_allclose(outputs("padding-mask")[:3], outputs("three-tokens"), atol=1e-12)
    unmasked = weights("padding-mask", mask="none")
    assert np.all(unmasked[:, 3] > 0.05)
    assert np.all(
        np.abs(outputs("padding-mask", mask="none")[:3]).sum(axis=1)
        < np.abs(outputs("three-tokens")).sum(axis=1)
    )


# -- checkpoints (seed 000, part 6) -------------------------------------------------------------
def test_similar_keys_get_similar_weights():
    w = weights("checkpoint-similar-keys")
    assert np.all(np.abs(w[:, 0] - w[:, 1]) < 0.02)
    # while other keys do get clearly different weights
    assert np.abs(w[:, 0] - w[:, 2]).max() > 0.2


def test_dominant_score_takes_nearly_all_weight():
    data = load_example("checkpoint-dominant-score")
    w, out = weights("checkpoint-dominant-score"), outputs("checkpoint-dominant-score")
    assert w[0, 1] > 0.99
    np.testing.assert_allclose(out[0], data.inputs.V[0, 1], atol=0.05)
    assert weights("checkpoint-dominant-score", temperature=5.0)[0, 1] < 0.8


def test_equal_scores_give_a_uniform_row():
    data = load_example("checkpoint-equal-scores")
    t = run("checkpoint-equal-scores")
    np.testing.assert_array_equal(t.stage("scores", 0)[0], [1.5] * 4)
    np.testing.assert_allclose(t.stage("weights", 0)[0], 1 / 4, atol=1e-15)
    np.testing.assert_allclose(t.stage("head_outputs", 0)[0], data.inputs.V[0].mean(axis=0))


def test_masked_token_gets_zero_weight():
    w = weights("checkpoint-masked-token")
    assert np.all(w[:, 2] == 0)
    assert np.all(weights("checkpoint-masked-token", mask="none")[:, 2] > 0.5)


def test_near_zero_query_gives_a_near_uniform_row():
    data = load_example("checkpoint-near-zero-query")
    w = weights("checkpoint-near-zero-query")
    assert np.ptp(w[0]) < 0.02 and np.ptp(w[1]) > 0.3
    np.testing.assert_allclose(
        outputs("checkpoint-near-zero-query")[0], data.inputs.V[0].mean(axis=0), atol=0.02
    )
    assert np.ptp(weights("checkpoint-near-zero-query", temperature=0.01)[0]) > 0.3


def test_identical_embeddings_without_positions_are_indistinguishable():
    data = load_example("checkpoint-identical-embeddings")
    assert data.config.mode == "projection" and data.config.positional == "none"
    assert data.tokens[0] == data.tokens[3]
    np.testing.assert_array_equal(data.inputs.X[0], data.inputs.X[3])
    t = run("checkpoint-identical-embeddings")
    w, out = t.stage("weights", 0), t.stage("head_outputs", 0)
    np.testing.assert_array_equal(w[0], w[3])
    np.testing.assert_array_equal(w[:, 0], w[:, 3])
    np.testing.assert_array_equal(out[0], out[3])
    # with the experiment's sinusoidal positions the two copies come apart
    moved = run("checkpoint-identical-embeddings", **data.experiment["try"])
    assert np.abs(moved.stage("weights", 0)[0] - moved.stage("weights", 0)[3]).max() > 0.01
    assert (
        np.abs(moved.stage("head_outputs", 0)[0] - moved.stage("head_outputs", 0)[3]).max() > 0.01
    )


def test_heads_not_dividing_d_model_is_refused_naming_heads():
    data = load_example("checkpoint-heads-not-dividing")
    assert data.config.d_model == 16 and data.config.heads == 4 and data.config.d_k is None
    assert data.experiment["try"] == {"heads": 3}
    with pytest.raises(AttentionInputError) as err:
        data.config.with_changes(**data.experiment["try"]).validate()
    assert err.value.field == "heads"
    assert "16" in str(err.value) and "3 heads" in str(err.value)


# -- no torch at run time; the generator reproduces the files ---------------------------------
def test_examples_load_and_compute_without_torch():
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # any import of torch now fails\n"
        "from attention_explorer.engine import compute\n"
        "from attention_explorer.session.examples import list_examples, load_example\n"
        "for info in list_examples():\n"
        "    d = load_example(info.key)\n"
        "    compute(d.inputs, d.config)\n"
        "print(len(list_examples()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) == len(KEYS)


@pytest.mark.skipif(find_spec("torch") is None, reason="the generator needs torch")
def test_generator_reproduces_the_shipped_files():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_examples.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
