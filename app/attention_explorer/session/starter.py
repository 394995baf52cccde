"""The session the window opens with when no file is given."""

from __future__ import annotations

from attention_explorer.engine import AttentionConfig, AttentionInputs
from attention_explorer.session.document import SessionData
from attention_explorer.session.resize import fit


def starter_session() -> SessionData:
    """Four tokens, two heads, projection mode with a causal mask: small enough to read.

    The description leaves the sizes out: the banner and the walkthrough say them from the
    config as it is now."""
    tokens = ("The", "cat", "sat", "down")
    d_model, heads = 8, 2
    config = AttentionConfig(mode="projection", heads=heads, d_model=d_model, mask="causal")
    dk = config.head_dim
    inputs = AttentionInputs(
        X=fit(None, (len(tokens), d_model), seed=11),
        W_Q=fit(None, (d_model, heads * dk), seed=12),
        W_K=fit(None, (d_model, heads * dk), seed=13),
        W_V=fit(None, (d_model, heads * dk), seed=14),
        W_O=fit(None, (heads * dk, d_model), seed=15),
    )
    return SessionData(
        tokens=tokens,
        config=config,
        inputs=inputs,
        name="Starter: the cat sat down",
        description="A sentence to start from. Change any number and watch.",
    )
