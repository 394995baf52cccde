"""The Output panel shows the router's choice (ui/model/model_output.py): for the chosen
position and layer, which experts and their weights, as plain text, after an edit and, where
it differs, before; a dense layer says it has no router; a dense model shows no section."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from attention_explorer.pretrained import model_run
from attention_explorer.ui.model.model_output import OutputPanel
from tests.models.conftest import random_checkpoint

pytest.importorskip("transformers")

TEXT = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A Qwen3-MoE run (layer 0 dense, layer 1 routed to 2 of 6 experts) and the same with
    heads 0 and 1 of layer 0 knocked out."""
    folder = random_checkpoint(
        tmp_path_factory.mktemp("moe_panel"),
        "Qwen3MoeConfig",
        "Qwen3MoeForCausalLM",
        hidden_size=32,
        intermediate_size=48,
        moe_intermediate_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        num_experts=6,
        num_experts_per_tok=2,
        mlp_only_layers=[0],
    )
    original = model_run(folder, TEXT, dtype="float64")
    edited = model_run(folder, TEXT, dtype="float64", knockout=[(0, 0), (0, 1)])
    return original, edited


def test_the_panel_shows_the_router_choice_at_the_chosen_token(qtbot, runs):
    original, edited = runs
    panel = OutputPanel()
    qtbot.addWidget(panel)
    panel.show_runs(original, edited)
    assert panel.router_text.isVisibleTo(panel)
    assert panel.router_text.textFormat() == Qt.TextFormat.PlainText
    assert panel.router_layer.value() == 1  # the first routed layer
    choice, was = edited.expert_choice(1), original.expert_choice(1)
    differ = 0
    for position in range(len(edited.tokens)):
        panel.position.setValue(position)
        text = panel.router_text.text()
        token = edited.tokens[position]
        assert text.startswith(f"Router of layer 1 at “{token}” (position {position}): top 2 of 6")
        first, second = choice.experts[position]
        shown = f"expert {first} × {choice.weights[position, 0]:.3f}, expert {second} × "
        assert shown in text.splitlines()[0]
        moved = list(was.experts[position]) != list(choice.experts[position])
        differ += moved
        before = original.router_text(1, position)
        if moved:  # another pair of experts before the knockout: shown on a second line
            assert text.splitlines()[1] == f"before the edit: {before}"
        same = before == edited.router_text(1, position)
        assert ("before the edit" in text) == (not same)
    assert differ >= 1  # the knockout re-routed some token
    panel.router_layer.setValue(0)
    assert panel.router_text.text().endswith("Layer 0 has a dense feed-forward: no router.")


def test_a_dense_model_shows_no_router(qtbot, gpt2_folder):
    run = model_run(gpt2_folder, "The cat sat", dtype="float64")
    panel = OutputPanel()
    qtbot.addWidget(panel)
    panel.show_runs(run, run)
    assert not panel.router_text.isVisibleTo(panel)
    assert panel.router_summary() == ""
