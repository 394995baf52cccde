"""The generation tools' refusals: one line each, a :class:`ModelError` (so every caller that
reports a model's problems reports these the same way)."""

from __future__ import annotations

from attention_explorer.pretrained.model_errors import ModelError


class GenerationError(ModelError):
    """A generation request that cannot be answered exactly: a model that does not predict
    the next token (an encoder, a masked-LM head, no head), an attention feature the
    incremental step does not implement (named), a bad argument or cache policy.
    ``what`` names the thing that is wrong (``"model"``, ``"architecture"``, ``"steps"``,
    ``"policy"``, ``"temperature"``…)."""
