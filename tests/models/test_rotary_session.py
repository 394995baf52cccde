"""A rotary layer (Llama, Qwen2, Mistral) opened with ``from_model`` is an ordinary projection
session using the engine's RoPE: its weights and output match ``model_run`` and transformers
(float64), and an edit of W_Q moves the model run as editing q_proj moves transformers. A
llama3 scaling the engine cannot express falls back to direct mode and says why."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.pretrained import from_model, model_run
from tests.models.test_llama_family import TEXT, TOL, _model_class, make_checkpoint

torch = pytest.importorskip("torch")

LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}


def _transformers_layer(folder, family, ids, layer, edit=None):
    """transformers' eager float64 run: layer ``layer``'s weights [h, n, n], its attention
    output (o_proj, before the residual) [n, d] and the logits [n, vocab]. ``edit`` =
    (row, column, delta) is added to q_proj.weight of that layer first."""
    model = (
        _model_class(family)
        .from_pretrained(folder, dtype=torch.float64, attn_implementation="eager")
        .eval()
    )
    attn = model.model.layers[layer].self_attn
    caught = {}

    def keep(_module, _inputs, out) -> None:  # returns None: the output is left unchanged
        caught["out"] = out[0]

    attn.register_forward_hook(keep)
    with torch.no_grad():
        if edit is not None:
            attn.q_proj.weight[edit[0], edit[1]] += edit[2]
        out = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
    weights = out.attentions[layer][0].numpy()  # [h, n, n]
    return weights, caught["out"][0].numpy(), out.logits[0].numpy()


CASES = {
    "llama-gqa-llama3": ("llama", {"rope_theta": 500000.0, "rope_scaling": {
        **LLAMA3, "original_max_position_embeddings": 8192}}),
    "qwen2-biases": ("qwen2", {}),
    "mistral-window": ("mistral", {"sliding_window": 5}),
    "llama-linear": ("llama", {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_rotary_layer_opens_as_a_projection_session_matching_transformers(tmp_path, case):
    family, extra = CASES[case]
    make_checkpoint(tmp_path, family, **extra)
    layer = 1
    session = from_model(tmp_path, TEXT, layer=layer)
    config = session.config
    assert config.mode == "projection" and config.positional == "rope"
    assert config.kv_heads == 2 and config.heads == 4
    scaling = extra.get("rope_scaling", {}).get("rope_type", "default")
    assert config.rope_scaling == scaling
    assert config.rope_theta == extra.get("rope_theta", 500.0)
    assert config.mask == "causal"  # Mistral's window is the session's window, on top
    assert config.window == (5 if family == "mistral" else None)
    if family == "qwen2":
        assert session.inputs.b_Q is not None and session.inputs.b_K is not None
    trace = compute(session.inputs, config, dtype="float64")
    run = model_run(tmp_path, TEXT, dtype="float64")
    weights, output, _ = _transformers_layer(tmp_path, family, list(run.ids), layer)
    ours = trace.stages["weights"]  # [h, n, n]
    to_run = float(np.abs(ours - run.attentions[layer]).max())
    to_hf = max(
        float(np.abs(ours - weights).max()), float(np.abs(trace.stages["output"] - output).max())
    )
    print(f"parity {case}: session vs model_run {to_run:.2e}, vs transformers {to_hf:.2e}")
    assert to_run <= 1e-12 and to_hf <= TOL
    if family == "mistral":  # the window hides keys 5 or more positions back
        assert ours[0, 10, :6].max() == 0.0 and ours[0, 10, 6] > 0


@pytest.mark.parametrize("case", ["llama-gqa-llama3", "qwen2-biases", "mistral-window"])
def test_an_edit_of_w_q_moves_the_run_as_editing_q_proj_moves_transformers(tmp_path, case):
    family, extra = CASES[case]
    make_checkpoint(tmp_path, family, **extra)
    layer, row, column, delta = 0, 3, 5, 2.5  # W_Q[row, column] is q_proj.weight[column, row]
    session = from_model(tmp_path, TEXT, layer=layer)
    W_Q = np.array(session.inputs.W_Q, dtype=np.float64)  # [d_model, heads * d_k]
    W_Q[row, column] += delta
    edited = replace(session, inputs=replace(session.inputs, W_Q=W_Q))
    base = model_run(tmp_path, TEXT, dtype="float64")
    moved = model_run(tmp_path, TEXT, dtype="float64", edits={layer: edited})
    _, _, hf_base = _transformers_layer(tmp_path, family, list(base.ids), layer)
    _, _, hf_moved = _transformers_layer(
        tmp_path, family, list(base.ids), layer, edit=(column, row, delta)
    )
    shift = float(np.abs(moved.logits - base.logits).max())
    worst = float(np.abs((moved.logits - base.logits) - (hf_moved - hf_base)).max())
    print(f"edit W_Q {case}: logits moved {shift:.2e}, differs from transformers by {worst:.2e}")
    assert shift > 1e-3
    assert float(np.abs(moved.logits - hf_moved).max()) <= TOL


def test_llama3_parameters_of_its_own_open_in_projection_mode(tmp_path):
    """llama3 factors other than Llama 3.1's are the session's rope_parameters (they sent the
    layer to direct mode before the engine carried them)."""
    scaling = {**LLAMA3, "original_max_position_embeddings": 16}
    make_checkpoint(tmp_path, "llama", rope_scaling=scaling)
    session = from_model(tmp_path, TEXT, layer=1)
    config = session.config
    assert config.mode == "projection" and session.inputs.W_Q is not None
    assert dict(config.rope_parameters)["original_max_position_embeddings"] == 16
    assert "direct mode" not in session.description
    run = model_run(tmp_path, TEXT, dtype="float64")
    trace = compute(session.inputs, session.config, dtype="float64")
    assert np.abs(trace.stages["weights"] - run.attentions[1]).max() < 1e-12
    default = compute(session.inputs, config.with_changes(rope_parameters=()), dtype="float64")
    assert np.abs(default.stages["weights"] - run.attentions[1]).max() > 1e-6
