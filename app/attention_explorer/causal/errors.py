"""The causal tools' refusals: one line each, a :class:`ModelError` (so every caller that
reports a model's problems reports these the same way)."""

from __future__ import annotations

from attention_explorer.pretrained.model_errors import ModelError


class CausalError(ModelError):
    """A patching, logit-lens or attribution request that cannot be answered: prompts of
    different lengths, a metric equal on both prompts, a token the vocabulary lacks, a model
    without an output head, an architecture whose steps the tools do not follow.
    ``what`` names the thing that is wrong (``"prompts"``, ``"metric"``, ``"token"``,
    ``"output"``, ``"architecture"``, ``"site"``…)."""


class PatchCancelled(CausalError):
    """The patching was stopped by its ``cancelled()`` callback."""

    def __init__(self, message: str = "the patching was cancelled"):
        super().__init__("cancelled", message)
