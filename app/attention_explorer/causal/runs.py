"""One prompt through the model with what the causal tools read at every layer, and the
partial runs that patching makes from it.

A :class:`CachedRun` keeps, for each block ``l``, the residual entering it
(``hidden[l] [n, d]``), its attention weights ``[heads, n, n]``, the values each query head
reads ``[heads, n, d_v]`` (a key/value head repeated for its group), each head's output before
W_O (``mixed[l] = weights @ values``, ``[heads, n, d_v]``) and the block's output after W_O
and its bias (``attn[l] [n, d]``, before the residual). Every step is the model run's own:
:func:`~attention_explorer.pretrained.forward.embed`, ``attention_input``, ``rest_of_layer``,
``output_logits`` and :func:`~attention_explorer.pretrained.kernel.attend`; the values are the
layer's W_V product. A run checks that ``mixed`` through W_O gives back ``attn``; a family
whose attention block does anything else after the weights (a norm on the block's output
inside the kernel, say) is refused by name rather than patched wrongly.

:func:`run_from` continues a run from block ``l`` with a patched residual or a patched
attention output, so a patching map costs the two cached runs and one partial run per site.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine import AttentionInputError, Backend
from attention_explorer.engine.backend import ArrayLib
from attention_explorer.kernels import ops_for
from attention_explorer.pretrained.checkpoint.weights import ModelWeights, in_dtype
from attention_explorer.pretrained.forward import (
    attention_input,
    embed,
    norm,
    output_logits,
    rest_of_layer,
)
from attention_explorer.pretrained.kernel import attend
from attention_explorer.pretrained.latent.attention import head_values
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.open_model import LoadedModel, load_model, model_backend
from attention_explorer.pretrained.output import RunOutputs

from .errors import CausalError

DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class Prepared:
    """A model ready for the causal tools: its weights in ``dtype`` on ``backend``."""

    loaded: LoadedModel
    w: ModelWeights
    dtype: str
    backend: Backend

    @property
    def name(self) -> str:
        """The model's name as the app shows it."""
        return self.loaded.name


@dataclass(frozen=True)
class _Vocabulary(RunOutputs):
    """The model's token lookups (:class:`RunOutputs`' ``token_id`` and ``token_text``)."""

    model: LoadedModel
    ids: tuple[int, ...] = ()
    logits: None = None


def _weights(loaded: LoadedModel, dtype: str, engine: Backend) -> ModelWeights:
    """The weights in ``dtype`` (kept with the model under the keys the model run uses), as
    torch tensors on the engine's device when ``engine`` is torch."""
    if dtype not in loaded.cast:
        loaded.cast[dtype] = in_dtype(loaded.weights, dtype)
    if engine.name != "torch":
        return loaded.cast[dtype]
    key = ("torch", dtype, engine.device)
    if key not in loaded.cast:
        from attention_explorer.pretrained.torch_weights import on_torch

        loaded.cast[key] = on_torch(loaded.cast[dtype], engine.device)
    return loaded.cast[key]


def prepare(
    model: str | os.PathLike | LoadedModel, dtype: str = "float32", backend="numpy"
) -> Prepared:
    """``model`` loaded, its weights in ``dtype`` on ``backend`` (numpy, torch, torch:cuda:0);
    a ModelError for an unknown dtype or an unusable backend, a :class:`CausalError` for a
    model without an output head (a sentence-embedding model such as MiniLM)."""
    if dtype not in DTYPES:
        raise CausalError("dtype", f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    loaded = load_model(model)
    engine = model_backend(backend)
    try:
        ArrayLib(engine, dtype)  # torch installed, the device usable: else a clear message
    except AttentionInputError as exc:
        raise ModelError("backend", str(exc)) from None
    if loaded.weights.head is None:
        raise CausalError(
            "output",
            f"{loaded.name} has no output head (no language-model or masked-LM prediction "
            "weights), so it has no logits to patch, read through the lens or attribute; "
            "use a model that predicts tokens (its knockout sweep measures the embedding's "
            "similarity instead)",
        )
    return Prepared(loaded, _weights(loaded, dtype, engine), dtype, engine)


def token_id(prepared: Prepared, token: int | str, role: str) -> int:
    """The id of ``token`` (an id, a piece, or a token as the strip shows it); a
    :class:`CausalError` naming ``role`` (``answer``, ``wrong``…) when the vocabulary lacks it."""
    try:
        return _Vocabulary(prepared.loaded).token_id(token)
    except ModelError:
        raise CausalError(
            "token",
            f"the {role} token {token!r} is not one token of {prepared.name}'s vocabulary; "
            "give a token as the token strip shows it, or its id",
        ) from None


def token_text(prepared: Prepared, tid: int) -> str:
    """Token ``tid`` as the token strip shows it."""
    return _Vocabulary(prepared.loaded).token_text(tid)


def host(x) -> np.ndarray:
    """An array of the run (numpy, or a torch tensor) as numpy."""
    return x if isinstance(x, np.ndarray) else x.detach().cpu().numpy()


def copy(x):
    """A copy of a numpy array or a torch tensor."""
    return x.copy() if isinstance(x, np.ndarray) else x.clone()


@dataclass(frozen=True, eq=False)
class CachedRun:
    """One prompt's run with every block's residual, weights, values, head outputs and
    attention output (arrays of the run's library; see the module docstring)."""

    text: str
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    hidden: Sequence  # layers + 1 of [n, d]: entering each block; the last after every block
    weights: Sequence  # layers of [heads, n, n]
    values: Sequence  # layers of [heads, n, d_v]
    mixed: Sequence  # layers of [heads, n, d_v]: weights @ values, before W_O
    attn: Sequence  # layers of [n, d]: mixed through W_O and b_O

    @property
    def final(self):
        """The residual after every block ``[n, d]``."""
        return self.hidden[-1]


def block_output(w: ModelWeights, layer: int, mixed):
    """Block ``layer``'s attention output ``[n, d]`` from each head's output ``mixed
    [heads, n, d_v]``: the concatenation times W_O plus b_O."""
    o = ops_for(mixed)
    lw = w.layers[layer]
    return o.linear(o.merge_heads(mixed), lw.W_O, lw.b_O)  # [n, d]


def _values(w: ModelWeights, layer: int, x):
    """The values each query head reads ``[heads, n, d_v]`` (its group's key/value head)."""
    if w.latent is not None:  # latent attention: each head's up-projection of the latents
        return head_values(w, layer, x)
    o = ops_for(x)
    lw = w.layers[layer]
    v = o.split_heads(o.linear(x, lw.W_V, lw.b_V), w.kv_heads, contiguous=True)  # [kv, n, d_v]
    return o.repeat_kv(v, w.heads // w.kv_heads)  # [heads, n, d_v]


def _check_block(prepared: Prepared, layer: int, attn, again) -> None:
    """A CausalError unless ``again`` (mixed through W_O) is the kernel's output ``attn``."""
    a, b = host(attn), host(again)
    tolerance = (1e-4 if prepared.dtype == "float32" else 1e-9) * (1.0 + float(np.abs(a).max()))
    if not np.all(np.abs(a - b) <= tolerance):
        raise CausalError(
            "architecture",
            f"layer {layer} of {prepared.name} ({prepared.w.family}) does more in its attention "
            "block than each head's weights times its values through W_O, so its heads "
            "cannot be patched or attributed one by one",
        )


def check_text(text, role: str = "text") -> str:
    """``text`` when it is a string, else a one-line CausalError naming ``role``."""
    if not isinstance(text, str):
        raise CausalError("text", f"the {role} must be a string, not {type(text).__name__}")
    return text


def cached_run(prepared: Prepared, text: str, heads: bool = True) -> CachedRun:
    """Run ``text`` through every block, keeping what patching reads (see :class:`CachedRun`).
    ``heads=False`` keeps only the residuals and the attention outputs (``weights``,
    ``values`` and ``mixed`` stay empty: the resid_pre and attn_out sites and the lens need
    no more, and a long text's ``[heads, n, n]`` weights are the largest part)."""
    w = prepared.w
    toks = prepared.loaded.tokenize(check_text(text))
    hidden, weights, values, mixed, attn = [], [], [], [], []
    try:
        h = embed(w, toks.ids, toks.type_ids, np.dtype(prepared.dtype))  # [n, d]
        for layer in range(w.n_layers):
            hidden.append(h)
            x = attention_input(w, layer, h)  # [n, d]
            p, a = attend(w, layer, x)  # [heads, n, n], [n, d]
            attn.append(a)
            if heads:
                v = _values(w, layer, x)  # [heads, n, d_v]
                z = ops_for(x).combine(p, v)  # [heads, n, d_v]
                _check_block(prepared, layer, a, block_output(w, layer, z))
                weights.append(p)
                values.append(v)
                mixed.append(z)
            h = rest_of_layer(w, layer, h, a)
        hidden.append(h)
    except AttentionInputError as exc:
        raise ModelError("backend", str(exc)) from None
    return CachedRun(text, toks.tokens, toks.ids, hidden, weights, values, mixed, attn)


def run_from(w: ModelWeights, layer: int, h, attn=None):
    """The residual after every block at the last position ``[1, d]``, continuing from block
    ``layer`` with the residual ``h [n, d]`` entering it; with ``attn [n, d]`` that block's
    attention output is ``attn`` instead of its own. The last block's feed-forward runs on
    the last row alone (what follows the attention is row by row)."""
    last = w.n_layers - 1
    start = layer
    if attn is not None:
        rows = slice(-1, None) if layer == last else slice(None)
        h = rest_of_layer(w, layer, h[rows], attn[rows])
        start = layer + 1
    for block in range(start, w.n_layers):
        _, a = attend(w, block, attention_input(w, block, h))  # [heads, n, n], [n, d]
        rows = slice(-1, None) if block == last else slice(None)
        h = rest_of_layer(w, block, h[rows], a[rows])  # [n, d]; [1, d] after the last
    return h[-1:]


def _features(w: ModelWeights, x):
    """What the output head multiplies by the unembedding, for ``x [rows, d]`` (the final
    norm; a masked-LM head's dense layer, activation and norm): ``[rows, d]``. The same
    steps as ``forward.output_logits`` before its product (:class:`Readout` checks it)."""
    head, o = w.head, ops_for(x)
    if head.kind == "mlm":
        x = o.ACTIVATIONS[w.activation](o.linear(x, head.W_dense, head.b_dense))
        return norm(w, x, head.norm)
    return norm(w, x, head.norm) if head.norm is not None else x


class Readout:
    """``logit[a] − logit[b]`` at the last position of a final residual: the head's features
    times ``W_U[a] − W_U[b]`` (two rows of the unembedding, not the whole vocabulary), or
    the full output head where that would differ (a cap on the logits, or any step the
    features do not follow: checked on the runs given)."""

    def __init__(self, prepared: Prepared, pair: tuple[int, int], runs: Sequence[CachedRun]):
        w = self.w = prepared.w
        self.pair = pair
        rows = w.head.decoder.rows(list(pair), np.dtype(prepared.dtype))  # [2, d]
        self.direction = rows[0] - rows[1]  # [d]
        bias = w.head.bias
        self.bias = 0.0 if bias is None else float(host(bias[pair[0]] - bias[pair[1]]))
        self.fast = w.logit_cap is None
        tolerance = 1e-4 if prepared.dtype == "float32" else 1e-9
        for run in runs:
            full = self.full(run.final[-1:])
            if self.fast and abs(self(run.final[-1:]) - full) > tolerance * (1 + abs(full)):
                self.fast = False

    def full(self, final) -> float:
        """The metric from the whole output head."""
        logits = last_logits(self.w, final)  # [vocab]
        return float(logits[self.pair[0]] - logits[self.pair[1]])

    def __call__(self, final) -> float:
        """The metric of ``final [rows, d]`` (its last row)."""
        if not self.fast:
            return self.full(final)
        x = _features(self.w, final[-1:])  # [1, d]
        return float(host(x @ self.direction)[0]) + self.bias


def last_logits(w: ModelWeights, final) -> np.ndarray:
    """The output head on the last position of ``final [n, d]``: logits ``[vocab]`` (numpy)."""
    return host(output_logits(w, final[-1:]))[0]  # [vocab]
