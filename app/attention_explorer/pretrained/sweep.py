"""Which heads matter? Knock out each head in turn and measure the change.

    changes = knockout_sweep("all-MiniLM-L6-v2", "The cat sat on the mat.")   # [layers, heads]

The measure is the log-probability of a target token at a position (a model with an output
head), or the cosine similarity of the mean-pooled embedding to a second text's, or to the
unchanged run's (an embedding model). Each knocked-out run starts from the knocked layer,
reusing the unchanged run before it, so a sweep costs heads × (layers + 1) / 2 layer passes.
:func:`sweep_estimate` says how long that is before starting; ``cancelled()`` stops it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from attention_explorer.pretrained.checkpoint.text_limits import check_text_length
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.open_model import LoadedModel, load_model
from attention_explorer.pretrained.run_model import ModelRun, model_run

MEASURES = ("auto", "logprob", "similarity")


class SweepCancelled(ModelError):
    """The sweep was cancelled by its ``cancelled()`` callback (or its estimate refused)."""

    def __init__(self, message: str = "the sweep was cancelled"):
        super().__init__("cancelled", message)


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep: ``changes [layers, heads]`` (measure with the head knocked out minus
    ``baseline``), what was measured (``label``), and how long it took."""

    changes: np.ndarray  # [layers, heads]
    baseline: float
    label: str
    seconds: float
    tokens: tuple[str, ...]


def _mask_position(run: ModelRun) -> int | None:
    return next((i for i, t in enumerate(run.tokens) if "mask" in t.lower()), None)


def _log_prob_measure(base: ModelRun, target, position):
    n = len(base.ids)
    if position is None:
        if base.model.weights.causal:
            position = max(n - 2, 0)  # predicting the text's last token
        else:
            found = _mask_position(base)
            position = n - 1 if found is None else found
    pos = base._position(position)
    if target is None:
        following = base.model.weights.causal and pos + 1 < n
        target = base.ids[pos + 1] if following else int(np.argmax(base.logits[pos]))
    tid = base.token_id(target)
    name = base.token_text(tid)
    label = f"log-probability of “{name}” at position {pos} (after “{base.tokens[pos]}”)"
    return (lambda run: float(run.log_probs(pos)[tid])), label


def _similarity_measure(base: ModelRun, other: str | None, kwargs):
    if other:
        reference = model_run(base.model, other, **kwargs).embedding()  # [d]
        label = f"cosine similarity of the mean-pooled embedding to “{other}”"
    else:
        reference = base.embedding()
        label = "cosine similarity of the mean-pooled embedding to the unchanged run's"

    def value(run: ModelRun) -> float:
        e = run.embedding()  # [d]
        return float(e @ reference / (np.linalg.norm(e) * np.linalg.norm(reference)))

    return value, label


def measure_for(base: ModelRun, measure="auto", target=None, position=None, other=None, **kw):
    """(``value(run) -> float``, label) for a measure name or a callable on a ModelRun."""
    if callable(measure):
        return measure, getattr(measure, "__name__", "custom measure")
    if measure not in MEASURES:
        raise ModelError("measure", f"unknown measure {measure!r}; choose from {MEASURES}")
    if measure == "auto":
        measure = "logprob" if base.logits is not None else "similarity"
    if measure == "logprob":
        if base.logits is None:
            raise ModelError("measure", base.output_note)
        return _log_prob_measure(base, target, position)
    return _similarity_measure(base, other, kw)


def _run_seconds(loaded: LoadedModel, text: str, kwargs) -> float:
    model_run(loaded, text, **kwargs)  # warm
    start = time.perf_counter()
    model_run(loaded, text, **kwargs)
    return time.perf_counter() - start


def sweep_estimate(
    model, text: str, dtype: str = "float32", backend: str = "numpy", threads: int | None = None
) -> float:
    """Seconds a knockout sweep of ``text`` should take here, from two timed runs."""
    check_text_length(model, text)  # before reading or tokenizing anything
    loaded = load_model(model)
    w = loaded.weights
    options = {"dtype": dtype, "backend": backend, "threads": threads}
    per_layer = _run_seconds(loaded, text, options) / w.n_layers
    return per_layer * w.heads * w.n_layers * (w.n_layers + 1) / 2


def run_sweep(
    model: str | os.PathLike | LoadedModel,
    text: str,
    measure="auto",
    target: int | str | None = None,
    position: int | None = None,
    other: str | None = None,
    edits: Mapping | None = None,
    dtype: str = "float32",
    backend: str = "numpy",
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    threads: int | None = None,
) -> SweepResult:
    """The sweep with what it measured; see :func:`knockout_sweep`."""
    check_text_length(model, text)  # before reading or tokenizing anything
    loaded = load_model(model)
    kwargs = {"dtype": dtype, "backend": backend, "threads": threads}
    base = model_run(loaded, text, edits=edits, **kwargs)
    value, label = measure_for(base, measure, target, position, other, **kwargs)
    baseline = value(base)
    layers, heads = base.n_layers, base.n_heads
    changes = np.zeros((layers, heads))  # [layers, heads]
    start = time.perf_counter()
    for layer in range(layers):
        for head in range(heads):
            if cancelled is not None and cancelled():
                raise SweepCancelled()
            run = model_run(loaded, text, edits, [(layer, head)], reuse=base, **kwargs)
            changes[layer, head] = value(run) - baseline
            if progress is not None:
                progress(layer * heads + head + 1, layers * heads)
    if not np.all(np.isfinite(changes)):
        raise ModelError("measure", f"the {label} is not finite for some knocked-out head")
    return SweepResult(changes, baseline, label, time.perf_counter() - start, base.tokens)


def knockout_sweep(
    model: str | os.PathLike | LoadedModel, text: str, measure="auto", **options
) -> np.ndarray:
    """Knock out each head in turn: ``[layers, heads]``, the change in ``measure``.

    ``measure``: ``"logprob"`` (log-probability of ``target``, a token id or string, at
    ``position``; by default a decoder's last token given the text before it, or the
    unchanged model's top prediction at a masked LM's ``[MASK]``), ``"similarity"`` (cosine
    similarity of the mean-pooled embedding to ``other``'s, or to the unchanged run's),
    ``"auto"`` (the first when the model has an output head), or a function of a
    :class:`ModelRun`. ``edits`` start from an edited model. ``progress(done, total)`` after
    each head; ``cancelled()`` is asked before each and stops the sweep with
    :class:`SweepCancelled`. :func:`sweep_estimate` gives the time before starting.
    The other options are :func:`run_sweep`'s: ``target``, ``position``, ``other``,
    ``edits``, ``dtype``, ``backend``, ``progress``, ``cancelled`` and ``threads`` (as
    :func:`model_run`'s).
    """
    return run_sweep(model, text, measure, **options).changes
