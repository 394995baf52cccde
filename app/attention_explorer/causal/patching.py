"""Activation patching between a clean and a corrupted prompt (issue 29).

    result = patch(model, "When Mary and John went, John gave it to", "When Mary and John
                   went, Mary gave it to", site="resid_pre", answer="Mary", wrong="John")
    np.asarray(result)          # [layers, positions]

The metric is ``m = logit[answer] − logit[wrong]`` at the last position; each cell is
``(m(patched) − m(corrupted)) / (m(clean) − m(corrupted))``: 1 where copying that one
activation from the clean run into the corrupted run restores the clean answer, 0 where it
does nothing. The sites (:data:`SITES`):

- ``resid_pre`` ``[layers, positions]``: the residual stream entering block l at position p;
- ``attn_out`` ``[layers, positions]``: block l's attention output (after W_O and its bias)
  at position p;
- ``head_out`` ``[layers, heads]``: head h's output (its slice of the concatenation, before
  W_O) at every position;
- ``pattern`` ``[layers, heads]``: head h's attention weights at every position (its values
  stay the corrupted run's).

A map costs the clean run, the corrupted run and one partial run per cell, from block l on
(:func:`~attention_explorer.causal.runs.run_from`), never a whole run per cell.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine.blas_threads import blas_threads
from attention_explorer.pretrained.open_model import LoadedModel

from .errors import CausalError, PatchCancelled
from .runs import (
    CachedRun,
    Prepared,
    Readout,
    block_output,
    cached_run,
    check_text,
    copy,
    last_logits,
    prepare,
    run_from,
    token_id,
    token_text,
)

#: BLAS threads of a patching map by default: its products are small (a partial run per
#: cell of a short text), and on the busy 2-core machine one thread made a 16-token
#: MiniLM-sized map 12x faster than every core (3.6 s against 42.7 s, before the metric read
#: two unembedding rows; see diagnostics/patch_bench.py). ``threads=None``: every core.
PATCH_THREADS = 1
#: The sites and the name of each map's second axis.
SITES = {"resid_pre": "position", "attn_out": "position", "head_out": "head", "pattern": "head"}


@dataclass(frozen=True, eq=False)
class PatchResult:
    """A patching map: ``values [layers, positions]`` or ``[layers, heads]`` (the axes in
    ``axes``), 1 = the clean answer restored, 0 = no effect; ``patched_metric`` holds each
    cell's raw metric ``logit[answer] − logit[wrong]``. ``np.asarray(result)`` is ``values``."""

    values: np.ndarray  # [layers, positions | heads]
    patched_metric: np.ndarray  # [layers, positions | heads]
    site: str
    axes: tuple[str, str]  # ("layer", "position") or ("layer", "head")
    tokens: tuple[str, ...]  # the clean prompt's tokens
    corrupted_tokens: tuple[str, ...]
    answer: str  # as the token strip shows it
    wrong: str
    answer_id: int
    wrong_id: int
    clean_metric: float
    corrupted_metric: float
    model: str
    dtype: str
    seconds: float

    def __array__(self, dtype=None, copy=None):
        """The map as a numpy array (``np.asarray(result)``)."""
        return self.values if dtype is None else self.values.astype(dtype)

    @property
    def shape(self) -> tuple[int, int]:
        """``(layers, positions)`` or ``(layers, heads)``."""
        return self.values.shape

    @property
    def row_labels(self) -> list[str]:
        """``layer 0``, ``layer 1``…"""
        return [f"layer {i}" for i in range(self.values.shape[0])]

    @property
    def col_labels(self) -> list[str]:
        """The clean prompt's tokens (``3 cat``) or ``head 0``, ``head 1``…"""
        if self.axes[1] == "position":
            return [f"{i} {t}" for i, t in enumerate(self.tokens)]
        return [f"head {h}" for h in range(self.values.shape[1])]

    @property
    def label(self) -> str:
        """What a cell is, in words (a map's title)."""
        return (
            f"{self.site}: share of logit[{self.answer}] − logit[{self.wrong}] restored "
            "by patching clean into corrupted"
        )

    def __repr__(self) -> str:
        layers, other = self.values.shape
        return (
            f"PatchResult(site={self.site!r}, [layer={layers}, {self.axes[1]}={other}], "
            f"answer={self.answer!r}, wrong={self.wrong!r}, clean={self.clean_metric:.4g}, "
            f"corrupted={self.corrupted_metric:.4g})"
        )


def check_site(site: str) -> str:
    """``site`` if it is one of :data:`SITES`, else a one-line CausalError listing them."""
    if site not in SITES:
        raise CausalError("site", f"unknown site {site!r}; choose from {', '.join(SITES)}")
    return site


def site_count(layers: int, heads: int, positions: int, site: str) -> int:
    """Cells of a map: layers × positions or layers × heads."""
    return layers * (positions if SITES[check_site(site)] == "position" else heads)


def check_lengths(clean: int, corrupted: int) -> None:
    """A CausalError naming both lengths unless the prompts have as many tokens."""
    if clean != corrupted:
        raise CausalError(
            "prompts",
            f"the clean prompt has {clean} tokens and the corrupted prompt {corrupted}; "
            "patching copies position by position, so both need the same number of tokens",
        )


def _checked(prepared: Prepared, clean: str, corrupted: str, site: str, answer, wrong):
    """The (answer, wrong) ids after every check that needs no run."""
    check_site(site)
    if answer is None or wrong is None:
        raise CausalError("token", "patching needs both an answer token and a wrong token")
    pair = (token_id(prepared, answer, "answer"), token_id(prepared, wrong, "wrong"))
    tokenize = prepared.loaded.tokenize
    clean, corrupted = check_text(clean, "clean prompt"), check_text(corrupted, "corrupted prompt")
    check_lengths(len(tokenize(clean).ids), len(tokenize(corrupted).ids))
    return pair


def check_patch(
    model: str | os.PathLike | LoadedModel,
    clean: str,
    corrupted: str,
    site: str = "resid_pre",
    answer: int | str | None = None,
    wrong: int | str | None = None,
    dtype: str = "float32",
    backend: str = "numpy",
) -> tuple[int, int]:
    """Every refusal of :func:`patch` that needs no run (the site, the tokens, the prompts'
    lengths, a model without an output head), at the cost of tokenizing: the (answer, wrong)
    token ids, or a one-line :class:`CausalError`. For a window to call as the user types
    and the command line before its estimate."""
    return _checked(prepare(model, dtype, backend), clean, corrupted, site, answer, wrong)


def patched_final(w, target: CachedRun, source: CachedRun, site: str, layer: int, index):
    """The residual after every block at the last position ``[1, d]`` of ``target``'s run
    with ``source``'s activation at ``site`` of block ``layer`` copied in: position(s) or
    head(s) ``index`` (an int, a list, or ``slice(None)`` for all)."""
    if site == "resid_pre":
        h = copy(target.hidden[layer])  # [n, d]
        h[index] = source.hidden[layer][index]
        return run_from(w, layer, h)
    if site == "attn_out":
        a = copy(target.attn[layer])  # [n, d]
        a[index] = source.attn[layer][index]
        return run_from(w, layer, target.hidden[layer], a)
    z = copy(target.mixed[layer])  # [heads, n, d_v]
    if site == "head_out":
        z[index] = source.mixed[layer][index]
    else:  # pattern: the source's weights on the target's values
        z[index] = source.weights[layer][index] @ target.values[layer][index]
    return run_from(w, layer, target.hidden[layer], block_output(w, layer, z))


def metric_map(
    prepared: Prepared,
    target: CachedRun,
    source: CachedRun,
    site: str,
    pair: tuple[int, int],
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> np.ndarray:
    """The raw metric ``logit[a] − logit[b]`` (``pair`` = (a, b)) of ``target`` patched at
    each cell of ``site`` with ``source``'s activation: ``[layers, positions | heads]``."""
    w = prepared.w
    readout = Readout(prepared, pair, (target, source))
    width = len(target.ids) if SITES[site] == "position" else w.heads
    out = np.empty((w.n_layers, width))  # [layers, positions | heads]
    total = out.size
    for layer in range(w.n_layers):
        for index in range(width):
            if cancelled is not None and cancelled():
                raise PatchCancelled()
            out[layer, index] = readout(patched_final(w, target, source, site, layer, index))
            if progress is not None:
                progress(layer * width + index + 1, total)
    return out


#: Relative gap under which the clean and corrupted metrics count as equal, by dtype: a
#: smaller one is rounding, and dividing by it would fill the map with noise.
EQUAL_GAP = {"float32": 1e-5, "float64": 1e-12}


def check_metrics(m_clean: float, m_corrupted: float, shown, dtype: str) -> None:
    """A CausalError unless both metrics are finite and differ by more than rounding."""
    what = f"logit[{shown[0]}] − logit[{shown[1]}]"
    if not (np.isfinite(m_clean) and np.isfinite(m_corrupted)):
        raise CausalError("metric", f"{what} is not finite on one of the prompts")
    scale = 1.0 + max(abs(m_clean), abs(m_corrupted))
    if abs(m_clean - m_corrupted) <= EQUAL_GAP[dtype] * scale:
        raise CausalError(
            "metric",
            f"{what} is {m_clean:.6g} on both prompts (to the run's precision), so no share of "
            "it can be restored; choose prompts or tokens that differ",
        )


def run_metric(prepared: Prepared, run: CachedRun, pair: tuple[int, int]) -> float:
    """``logit[a] − logit[b]`` at the last position of an unpatched run."""
    logits = last_logits(prepared.w, run.final)  # [vocab]
    return float(logits[pair[0]] - logits[pair[1]])


def patch(
    model: str | os.PathLike | LoadedModel,
    clean: str,
    corrupted: str,
    site: str = "resid_pre",
    answer: int | str | None = None,
    wrong: int | str | None = None,
    dtype: str = "float32",
    backend: str = "numpy",
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    threads: int | None = PATCH_THREADS,
) -> PatchResult:
    """Patch each activation of ``site`` from the clean run into the corrupted run; see the
    module docstring. ``answer`` and ``wrong`` are tokens as the token strip shows them (or
    ids). ``progress(done, total)`` after each cell; ``cancelled()`` is asked before each and
    stops with :class:`PatchCancelled`; :func:`patch_estimate` gives the time first.
    ``threads`` caps the BLAS threads (default :data:`PATCH_THREADS`; None: every core).
    Raises
    :class:`CausalError` (one line) for prompts of different lengths, a metric equal on both
    prompts, a token the vocabulary lacks or a model without an output head."""
    started = time.perf_counter()
    prepared = prepare(model, dtype, backend)
    pair = _checked(prepared, clean, corrupted, site, answer, wrong)
    with blas_threads(threads):
        heads = SITES[site] == "head"
        clean_run = cached_run(prepared, clean, heads)
        corrupted_run = cached_run(prepared, corrupted, heads)
        m_clean = run_metric(prepared, clean_run, pair)
        m_corrupted = run_metric(prepared, corrupted_run, pair)
        shown = [token_text(prepared, t) for t in pair]
        check_metrics(m_clean, m_corrupted, shown, dtype)
        raw = metric_map(prepared, corrupted_run, clean_run, site, pair, progress, cancelled)
        if not np.all(np.isfinite(raw)):
            raise CausalError("metric", f"the patched metric is not finite for some {site} cell")
    values = (raw - m_corrupted) / (m_clean - m_corrupted)  # [layers, positions | heads]
    return PatchResult(
        values=values,
        patched_metric=raw,
        site=site,
        axes=("layer", SITES[site]),
        tokens=clean_run.tokens,
        corrupted_tokens=corrupted_run.tokens,
        answer=shown[0],
        wrong=shown[1],
        answer_id=pair[0],
        wrong_id=pair[1],
        clean_metric=m_clean,
        corrupted_metric=m_corrupted,
        model=prepared.name,
        dtype=dtype,
        seconds=time.perf_counter() - started,
    )


def patch_estimate(
    model: str | os.PathLike | LoadedModel,
    text: str,
    site: str = "resid_pre",
    dtype: str = "float32",
    backend: str = "numpy",
    threads: int | None = PATCH_THREADS,
) -> float:
    """Seconds a patching map of ``site`` on prompts like ``text`` should take here, from
    timed runs: two cached runs, plus per cell a partial run from its layer on (timed as a
    partial run through every block, shared out per block)."""
    check_site(site)
    prepared = prepare(model, dtype, backend)
    w = prepared.w
    with blas_threads(threads):
        heads = SITES[site] == "head"
        run = cached_run(prepared, text, heads)  # warm
        start = time.perf_counter()
        run = cached_run(prepared, text, heads)
        cached = time.perf_counter() - start
        readout = Readout(prepared, (0, min(1, w.vocab - 1)), ())
        start = time.perf_counter()
        readout(run_from(w, 0, run.hidden[0]))
        per_layer = (time.perf_counter() - start) / w.n_layers
    width = site_count(1, w.heads, len(run.ids), site)
    return 2 * cached + per_layer * width * w.n_layers * (w.n_layers + 1) / 2
