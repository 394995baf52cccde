"""The logit lens: what the model would predict if it stopped after each block.

    lens = logit_lens(model, "The cat sat on the")
    lens.log_probs            # [layers + 1, positions, vocab]
    lens.top_texts[-1][-1]    # the final layer's ten best tokens at the last position

Row 0 is the residual after the embeddings, row l + 1 the residual after block l (the last
row is the model's own prediction); each goes through the model's output head as the final
residual does (the final norm and the unembedding: ``output_logits``), then a log-softmax.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine.blas_threads import blas_threads
from attention_explorer.pretrained.forward import output_logits
from attention_explorer.pretrained.open_model import LoadedModel
from attention_explorer.pretrained.output import log_softmax

from .errors import CausalError
from .runs import cached_run, check_text, host, prepare, token_text

#: How many best tokens the result names at each cell.
TOP = 10
#: The largest ``log_probs`` array the lens makes (bytes); more is refused.
LIMIT_BYTES = 1 << 31


@dataclass(frozen=True, eq=False)
class LensResult:
    """The logit lens of one text: ``log_probs [layers + 1, positions, vocab]`` (float64 for
    a float64 run, else float32), and at each cell the :data:`TOP` best tokens
    (``top_ids``, ``top_probs`` ``[layers + 1, positions, TOP]``, ``top_texts`` as the token
    strip shows them). ``np.asarray(result)`` is ``log_probs``."""

    log_probs: np.ndarray  # [layers + 1, positions, vocab]
    top_ids: np.ndarray  # [layers + 1, positions, TOP]
    top_probs: np.ndarray  # [layers + 1, positions, TOP]
    top_texts: tuple[tuple[tuple[str, ...], ...], ...]  # [layers + 1][positions][TOP]
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    model: str
    dtype: str
    seconds: float
    axes: tuple[str, str, str] = ("layer", "position", "vocab")

    def __array__(self, dtype=None, copy=None):
        """``log_probs`` as a numpy array."""
        return self.log_probs if dtype is None else self.log_probs.astype(dtype)

    @property
    def row_labels(self) -> list[str]:
        """``embeddings``, ``after layer 0``, ``after layer 1``…"""
        return ["embeddings"] + [f"after layer {i}" for i in range(self.log_probs.shape[0] - 1)]

    @property
    def col_labels(self) -> list[str]:
        """The tokens with their positions (``3 cat``)."""
        return [f"{i} {t}" for i, t in enumerate(self.tokens)]

    @property
    def top_prob(self) -> np.ndarray:
        """The best token's probability at each cell ``[layers + 1, positions]``."""
        return self.top_probs[:, :, 0]

    def rank_of(self, token_id: int) -> np.ndarray:
        """``[layers + 1, positions]``: token ``token_id``'s rank at each cell (0 = the best;
        ties count against it)."""
        chosen = self.log_probs[:, :, int(token_id)][..., None]  # [layers + 1, n, 1]
        return (self.log_probs > chosen).sum(axis=-1)

    def final_ranks(self) -> np.ndarray:
        """``[layers + 1, positions]``: at each cell, the rank of the model's final answer at
        that position (its best token after every block)."""
        answer = self.top_ids[-1, :, 0]  # [positions]
        chosen = np.take_along_axis(self.log_probs, answer[None, :, None], axis=-1)
        return (self.log_probs > chosen).sum(axis=-1)

    def __repr__(self) -> str:
        rows, n, vocab = self.log_probs.shape
        return f"LensResult([layer={rows}, position={n}, vocab={vocab}], model={self.model!r})"


def logit_lens(
    model: str | os.PathLike | LoadedModel,
    text: str,
    dtype: str = "float32",
    backend: str = "numpy",
    threads: int | None = None,
) -> LensResult:
    """The logit lens of ``text`` (see the module docstring): a :class:`LensResult`. Raises
    :class:`CausalError` for a model without an output head, or a lens too large to hold."""
    started = time.perf_counter()
    prepared = prepare(model, dtype, backend)
    w = prepared.w
    n = len(prepared.loaded.tokenize(check_text(text)).ids)
    size = (w.n_layers + 1) * n * w.vocab * np.dtype(dtype).itemsize
    if size > LIMIT_BYTES:
        raise CausalError(
            "size",
            f"the lens of {n} tokens through {w.n_layers + 1} rows of {w.vocab} tokens would "
            f"take {size / 2**30:.1f} GiB; give a shorter text",
        )
    log_probs = np.empty((w.n_layers + 1, n, w.vocab), dtype=dtype)  # [layers + 1, n, vocab]
    with blas_threads(threads):
        run = cached_run(prepared, text, heads=False)
        for row, h in enumerate(run.hidden):  # one [n, vocab] row at a time
            log_probs[row] = log_softmax(host(output_logits(w, h)))
    k = min(TOP, w.vocab)
    top_ids = np.argsort(-log_probs, axis=-1, kind="stable")[:, :, :k]  # [layers + 1, n, k]
    top_probs = np.exp(np.take_along_axis(log_probs, top_ids, axis=-1).astype(np.float64))
    texts = {int(t): token_text(prepared, int(t)) for t in np.unique(top_ids)}
    top_texts = tuple(tuple(tuple(texts[int(t)] for t in cell) for cell in row) for row in top_ids)
    return LensResult(
        log_probs=log_probs,
        top_ids=top_ids,
        top_probs=top_probs,
        top_texts=top_texts,
        tokens=run.tokens,
        ids=run.ids,
        model=prepared.name,
        dtype=dtype,
        seconds=time.perf_counter() - started,
    )
