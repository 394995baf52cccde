"""The Output panel's line about a routed feed-forward (Qwen3-MoE, OLMoE, gpt-oss,
DeepSeek-V3): which experts the router chose for one token in one layer, after an edit and,
where it differs, before it. Words only: the choice itself is the run's
(:meth:`attention_explorer.pretrained.output.RunOutputs.router_text`)."""

from __future__ import annotations

from attention_explorer.pretrained.model_errors import ModelError


def router_summary(original, edited, layer: int, position: int) -> str:
    """The router's choice in ``layer`` at token ``position`` of the ``edited`` run, and of
    the ``original`` run on a second line when it differs; a refusal's one line as is."""
    try:
        after = edited.router_text(layer, position)
        before = original.router_text(layer, position)
    except ModelError as exc:
        return str(exc)
    token = edited.tokens[position]
    text = f"Router of layer {layer} at “{token}” (position {position}): {after}"
    return text if before == after else f"{text}\nbefore the edit: {before}"
