"""``model_attention``: every layer's attention weights of a text, as the Model panel's overview
and BertViz users expect, run on the model run's kernel with no output head."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from attention_explorer.engine import Backend
from attention_explorer.pretrained.open_model import LoadedModel, _run, load_model, model_backend
from attention_explorer.pretrained.run_model import model_run

#: The overview's hidden states are kept for from_model up to this size (and 2 texts).
KEEP_HIDDEN_BYTES = 64 * 2**20


def _keep_hidden(loaded: LoadedModel, text: str, hidden: np.ndarray) -> None:
    """Keep the float64 hidden states ``[layers + 1, n, d]`` of ``text`` with the model, so
    that opening a layer of the overview's text (from_model) runs nothing again: they are
    the hidden states from_model computes, to the bit (the same kernel in float64)."""
    if hidden.nbytes > KEEP_HIDDEN_BYTES:
        return
    for old in [k for k in list(loaded.cast) if isinstance(k, tuple) and k[0] == "hidden"][:-1]:
        del loaded.cast[old]
    loaded.cast[("hidden", text)] = hidden


def model_attention(
    model: str | os.PathLike | LoadedModel,
    text: str,
    backend: str | Backend = "numpy",
    progress: Callable[[int, int], None] | None = None,
    dtype: str = "float64",
    threads: int | None = None,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Every layer's attention weights ``[layers, heads, n, n]`` and the tokens.

    ``dtype`` float64 (parity with transformers) or float32 (half the memory traffic: each
    layer's weights are read from the checkpoint as float32). On numpy the layers run through
    the model run's kernel with no output head; another backend runs the engine's
    ``compute()`` in float64. ``progress(layers_done, layers)`` is called after each layer;
    ``threads`` as :func:`~attention_explorer.pretrained.run_model.model_run`'s.
    """
    loaded = load_model(model)
    if model_backend(backend).name == "numpy":
        run = model_run(loaded, text, dtype=dtype, progress=progress, logits=False, threads=threads)
        if dtype == "float64":
            _keep_hidden(loaded, text, run.hidden)
        return run.attentions, run.tokens  # [layers, heads, n, n]
    toks = loaded.tokenize(text)
    _, weights = _run(loaded, toks, loaded.weights.n_layers, backend, True, progress)
    return np.stack(weights), toks.tokens  # [layers, heads, n, n]
