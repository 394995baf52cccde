"""Direct logit attribution: how much each head's output, read straight through the output
head, pushes the target token's logit (or target − distractor) at the last position.

For head h of block l at the last position: its output ``o = z_h · W_O[rows of h]`` (no
bias), through the final norm with its scale frozen from the full residual ``r`` there
(``sqrt(var(r) + eps)`` for a LayerNorm, which is centred first as TransformerLens'
``apply_ln_to_stack`` does; ``sqrt(mean(r²) + eps)`` for an RMSNorm, not centred), times
the norm's weight, dotted with ``W_U[target] − W_U[distractor]`` (or ``W_U[target]``).
The residual is the embedding plus every block's attention output (the heads and b_O) and
feed-forward output, so with those parts, the final norm's bias and the output bias the
attributions sum to the real logit (difference): :class:`AttributionResult` holds every
part, and a model where they would not sum (a post-norm encoder, a masked-LM head with its
own dense layer, a norm after the attention block) is refused by name.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine.blas_threads import blas_threads
from attention_explorer.pretrained.open_model import LoadedModel

from .errors import CausalError
from .runs import Prepared, cached_run, host, last_logits, prepare, token_id, token_text


@dataclass(frozen=True, eq=False)
class AttributionResult:
    """Each head's direct effect ``values [layers, heads]`` on ``logit[target]`` (minus
    ``logit[distractor]`` when there is one) at the last position, with the other parts of
    the same sum: ``embed``, ``attn_bias [layers]`` (b_O), ``mlp [layers]``, ``norm_bias``
    (the final norm's bias) and ``head_bias`` (the output layer's); ``total`` is the real
    logit (difference) they add up to. ``np.asarray(result)`` is ``values``."""

    values: np.ndarray  # [layers, heads]
    embed: float
    attn_bias: np.ndarray  # [layers]
    mlp: np.ndarray  # [layers]
    norm_bias: float
    head_bias: float
    total: float
    target: str
    distractor: str | None
    target_id: int
    distractor_id: int | None
    tokens: tuple[str, ...]
    model: str
    dtype: str
    seconds: float
    axes: tuple[str, str] = ("layer", "head")

    def __array__(self, dtype=None, copy=None):
        """``values`` as a numpy array."""
        return self.values if dtype is None else self.values.astype(dtype)

    @property
    def parts_sum(self) -> float:
        """Every part added up: the heads, b_O, the feed-forwards, the embedding and both
        biases (equal to :attr:`total`)."""
        return float(
            self.values.sum()
            + self.attn_bias.sum()
            + self.mlp.sum()
            + self.embed
            + self.norm_bias
            + self.head_bias
        )

    @property
    def label(self) -> str:
        """What a cell is, in words (a map's title)."""
        what = f"logit[{self.target}]"
        if self.distractor is not None:
            what += f" − logit[{self.distractor}]"
        return f"direct effect of each head on {what} at the last position"

    @property
    def row_labels(self) -> list[str]:
        """``layer 0``, ``layer 1``…"""
        return [f"layer {i}" for i in range(self.values.shape[0])]

    @property
    def col_labels(self) -> list[str]:
        """``head 0``, ``head 1``…"""
        return [f"head {h}" for h in range(self.values.shape[1])]

    def __repr__(self) -> str:
        layers, heads = self.values.shape
        return (
            f"AttributionResult([layer={layers}, head={heads}], target={self.target!r}, "
            f"distractor={self.distractor!r}, total={self.total:.4g})"
        )


def _refuse_unless_additive(prepared: Prepared) -> None:
    """A CausalError naming the model unless its residual stream adds up to what its output
    head reads through one final norm."""
    w, name = prepared.w, prepared.name
    if w.arch.norm_placement != "pre":
        raise CausalError(
            "architecture",
            f"{name} ({w.family}) normalises the residual stream after every block (post-norm), "
            "so no head's output reaches the output head unchanged; direct attribution needs "
            "a pre-norm model",
        )
    if w.head.kind != "lm":
        raise CausalError(
            "architecture",
            f"{name}'s output head is a masked-LM head (a dense layer and an activation before "
            "its norm), which is not linear in the residual; direct attribution needs a "
            "language-model head",
        )
    if any(lw.ln_attn_out is not None for lw in w.layers):
        raise CausalError(
            "architecture",
            f"{name} ({w.family}) normalises each attention block's output before adding it "
            "to the residual stream, so a head's output is not what reaches the output head; "
            "direct attribution is not defined for it",
        )
    if w.logit_cap is not None:
        raise CausalError(
            "architecture",
            f"{name} caps its logits (cap · tanh(logit / cap)), which is not linear in the "
            "residual; direct attribution is not defined for it",
        )
    if w.head.norm is not None and w.arch.norm not in ("layernorm", "rmsnorm"):
        raise CausalError(
            "architecture", f"{name}'s final norm {w.arch.norm!r} is not one the tools know"
        )


def head_attribution(
    model: str | os.PathLike | LoadedModel,
    text: str,
    target: int | str | None = None,
    distractor: int | str | None = None,
    dtype: str = "float32",
    backend: str = "numpy",
    threads: int | None = None,
) -> AttributionResult:
    """Each head's direct effect on ``logit[target]`` (− ``logit[distractor]``) at the last
    position of ``text``: an :class:`AttributionResult` (see the module docstring). Tokens as
    the token strip shows them, or ids. Raises :class:`CausalError` (one line) for a token
    the vocabulary lacks, a model without an output head, or one whose parts would not add
    up (post-norm, a masked-LM head)."""
    started = time.perf_counter()
    if target is None:
        raise CausalError("token", "attribution needs a target token")
    prepared = prepare(model, dtype, backend)
    _refuse_unless_additive(prepared)
    t = token_id(prepared, target, "target")
    d = None if distractor is None else token_id(prepared, distractor, "distractor")
    with blas_threads(threads):
        run = cached_run(prepared, text)
        logits = last_logits(prepared.w, run.final)  # [vocab]
    w = prepared.loaded.cast[dtype]  # the same weights as numpy arrays
    head = w.head
    ids = [t] if d is None else [t, d]
    rows = np.asarray(head.decoder.rows(ids, np.float64))  # [1 | 2, d]
    direction = rows[0] if d is None else rows[0] - rows[1]  # [d]
    last = len(run.ids) - 1
    r = host(run.final)[last].astype(np.float64)  # [d]: the residual the final norm reads
    centred = head.norm is not None and w.arch.norm == "layernorm"
    if head.norm is None:
        scale, gamma, beta = 1.0, 1.0, None
    else:
        spread = r - r.mean() if centred else r
        scale = float(np.sqrt(np.mean(spread**2) + w.eps))
        gamma, beta = np.asarray(head.norm[0], np.float64), head.norm[1]

    def project(x):  # [..., d] -> [...]: through the frozen final norm onto the direction
        x = np.asarray(x, dtype=np.float64)
        if centred:
            x = x - x.mean(axis=-1, keepdims=True)
        return (x / scale * gamma) @ direction

    layers, heads = w.n_layers, w.heads
    values = np.empty((layers, heads))  # [layers, heads]
    attn_bias, mlp = np.zeros(layers), np.zeros(layers)  # [layers]
    for layer in range(layers):
        lw = w.layers[layer]
        z = host(run.mixed[layer])[:, last, :].astype(np.float64)  # [heads, d_v]
        W_O = np.asarray(lw.W_O, np.float64).reshape(heads, -1, w.d_model)  # [heads, d_v, d]
        values[layer] = project(np.einsum("hv,hvd->hd", z, W_O))  # [heads]
        attn_bias[layer] = 0.0 if lw.b_O is None else project(lw.b_O)
        step = host(run.hidden[layer + 1])[last] - host(run.hidden[layer])[last]  # [d]
        mlp[layer] = project(step - host(run.attn[layer])[last])
    norm_bias = 0.0 if beta is None else float(np.asarray(beta, np.float64) @ direction)
    bias = head.bias
    head_bias = 0.0 if bias is None else float(bias[t] - (0.0 if d is None else bias[d]))
    total = float(logits[t] - (0.0 if d is None else logits[d]))
    result = AttributionResult(
        values=values,
        embed=float(project(host(run.hidden[0])[last])),
        attn_bias=attn_bias,
        mlp=mlp,
        norm_bias=norm_bias,
        head_bias=head_bias,
        total=total,
        target=token_text(prepared, t),
        distractor=None if d is None else token_text(prepared, d),
        target_id=t,
        distractor_id=d,
        tokens=run.tokens,
        model=prepared.name,
        dtype=dtype,
        seconds=time.perf_counter() - started,
    )
    _check_sum(prepared, result, values, attn_bias, mlp)
    return result


def _check_sum(prepared: Prepared, result: AttributionResult, *parts) -> None:
    """A CausalError unless the parts add up to the real logit (difference)."""
    size = sum(float(np.abs(p).sum()) for p in parts) + abs(result.embed) + abs(result.total)
    tolerance = (1e-4 if prepared.dtype == "float32" else 1e-9) * (1.0 + size)
    if not abs(result.parts_sum - result.total) <= tolerance:
        raise CausalError(
            "architecture",
            f"the parts of {prepared.name}'s residual stream add up to {result.parts_sum:.6g}, "
            f"not its logit difference {result.total:.6g}: its blocks or output head do "
            "more than add each head's output to the residual (a norm after the attention "
            "block, a cap on the logits), so per-head attribution is not defined for it",
        )
