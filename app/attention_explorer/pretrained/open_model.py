"""Loading a model, and ``from_model``: one layer as an editable session. (Every layer's
weights, ``model_attention``, are in :mod:`attention_explorer.pretrained.overview`.)"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from attention_explorer.engine import AttentionInputError, Backend
from attention_explorer.engine.backend import resolve_backend
from attention_explorer.pretrained.checkpoint.source import (
    files_stamp,
    packaged_name,
    resolve_model,
)
from attention_explorer.pretrained.checkpoint.tokenize import (
    Tokens,
    check_type_ids,
    load_tokenizer,
    tokenize,
)
from attention_explorer.pretrained.checkpoint.validate import check_ids
from attention_explorer.pretrained.checkpoint.weights import ModelWeights, read_weights
from attention_explorer.pretrained.forward import attention_input, attention_parts, run_layers
from attention_explorer.pretrained.latent.session import latent_note
from attention_explorer.pretrained.layer_parts import layer_view
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.rotary import rotary_note
from attention_explorer.session.document import SessionData

#: Texts whose tokens a LoadedModel keeps.
TEXTS_KEPT = 8


@dataclass(frozen=True)
class LoadedModel:
    """A model read from its folder: weights, tokenizer and the name to show."""

    name: str
    folder: Path
    weights: ModelWeights
    tokenizer: object
    #: Filled on first use: the weights in another dtype (by dtype name), the unedited runs
    #: edits compare with (``("base", …)``), the overview's float64 hidden states
    #: (``("hidden", text)``, which from_model takes instead of running the layers again).
    cast: dict = field(default_factory=dict, compare=False, repr=False)

    def tokenize(self, text: str) -> Tokens:
        """``text`` as this model's tokens (no padding); ModelError if empty or too long.
        The latest :data:`TEXTS_KEPT` texts' tokens are kept: the window, a sweep and the
        benchmarks run one text again and again (1.1 ms a run at 256 tokens)."""
        key = ("tokens", text)
        toks = self.cast.get(key)
        if toks is None:
            toks = tokenize(self.tokenizer, text, self.weights.max_positions)
            check_ids(toks.ids, toks.tokens, self.weights.vocab, self.folder)
            if self.weights.token_type is not None:  # BERT: the type table has these rows
                rows = int(self.weights.token_type.shape[0])
                check_type_ids(toks.type_ids, rows, "the checkpoint's token type table")
            kept = [k for k in list(self.cast) if isinstance(k, tuple) and k[0] == "tokens"]
            for old in kept[: max(0, len(kept) - TEXTS_KEPT + 1)]:
                self.cast.pop(old, None)
            self.cast[key] = toks
        return toks


@lru_cache(maxsize=4)
def _load_cached(folder: str, stamp: tuple, name: str) -> LoadedModel:
    path = Path(folder)
    weights = read_weights(path, name)
    return LoadedModel(name, path, weights, load_tokenizer(path))


def _display_name(model: str | os.PathLike, folder: Path) -> str:
    given = os.fspath(model).strip()
    if Path(given).expanduser().exists():
        return packaged_name(folder) or folder.name
    return given


def load_model(model: str | os.PathLike | LoadedModel) -> LoadedModel:
    """The model in a folder or under a hub id, read once and kept (the 4 latest are cached).

    The cache is keyed on every file that loading reads (config.json, tokenizer.json, the
    shard index and the safetensors files: size, time and inode, and config.json's bytes), so
    a file edited or replaced since the last load is read again."""
    if isinstance(model, LoadedModel):
        return model
    folder = resolve_model(model).resolve()
    stamp = files_stamp(folder)
    return _load_cached(str(folder), stamp, _display_name(model, folder))


def model_backend(backend: str | Backend) -> Backend:
    """``backend`` read by the one backend parser
    (:func:`~attention_explorer.engine.backend.resolve_backend`: ``numpy``, ``torch``,
    ``torch:cuda:0`` or a :class:`Backend`); a ModelError naming the fix when it is refused."""
    try:
        return resolve_backend(backend)
    except AttentionInputError as exc:
        raise ModelError("backend", str(exc)) from None


def _check_layer(loaded: LoadedModel, layer: object) -> int:
    count = loaded.weights.n_layers
    if (
        isinstance(layer, bool)
        or not isinstance(layer, (int, np.integer))
        or not 0 <= layer < count
    ):
        raise ModelError(
            "layer", f"layer {layer!r} is out of range: {loaded.name} has layers 0..{count - 1}"
        )
    return int(layer)


def _run(loaded: LoadedModel, toks: Tokens, stop: int, backend, keep_weights: bool, progress=None):
    try:
        return run_layers(
            loaded.weights,
            toks.ids,
            toks.type_ids,
            stop,
            model_backend(backend),
            keep_weights,
            progress,
        )
    except AttentionInputError as exc:  # e.g. torch asked for but not installed
        raise ModelError("backend", str(exc)) from None


def model_source_note(name: str, layer: int, text: str, pre_norm: str | None) -> str:
    """The provenance line a model session carries (and the UI shows after an edit);
    ``pre_norm`` names the norm the attention reads (pre-norm families), else None."""
    where = f"the output of {pre_norm} (pre-norm)" if pre_norm else "the hidden state (post-norm)"
    return f"Layer {layer} of {name} on “{text}”. X is {where} that this layer's attention reads."


def from_model(
    model: str | os.PathLike | LoadedModel,
    text: str,
    layer: int = 0,
    backend: str | Backend = "numpy",
) -> SessionData:
    """Layer ``layer`` of a real model reading ``text``, as an editable projection session.

    X is exactly the input of that layer's attention; W_Q, W_K, W_V, W_O and their biases are
    its weights in math orientation (``Q = X W_Q + b_Q``); tokens are the tokenizer's own;
    decoders get a causal mask. Computing the session reproduces the model's attention
    weights and the attention block's output (before the residual).
    Raises :class:`ModelError` with one clear message for any problem.
    """
    loaded = load_model(model)
    layer = _check_layer(loaded, layer)
    toks = loaded.tokenize(text)
    kept = loaded.cast.get(("hidden", text)) if model_backend(backend).name == "numpy" else None
    if kept is not None:  # the overview of this text ran every layer: no need to run again
        h = kept[layer]  # [n, d]
    else:
        h, _ = _run(loaded, toks, layer, backend, keep_weights=False)
    w = loaded.weights
    config, inputs = attention_parts(w, layer, attention_input(w, layer, h))
    pre = w.arch.tensors["attn_norm"].format(i=layer) if w.arch.norm_placement == "pre" else None
    # direct mode says why (the layer's own RoPE and window: layer_view)
    why = rotary_note(layer_view(w, layer)) if config.mode == "direct" else ""
    why = latent_note(w) or why  # latent attention: why direct mode, what Q, K and V are
    note = model_source_note(loaded.name, layer, text, pre) + why
    if config.attention_sinks:  # gpt-oss: say where the rows' missing weight goes
        note += (
            " Each head's softmax also holds its learned sink logit (inputs.sinks), so a row's "
            "weights sum to 1 − the weight the sink takes (the sink_weight stage)."
        )
    return SessionData(
        tokens=toks.tokens,
        config=config,
        inputs=inputs,
        name=f"{loaded.name}, layer {layer}",
        description=note,
        experiment={
            "model": {
                "name": loaded.name,
                "folder": str(loaded.folder),
                "text": text,
                "layer": layer,
            }
        },
    )
