"""What "attention beside cause" computes (no Qt): for every head of the clean prompt, how much
the last position attends to the answer's source (the positions that hold the answer token)
and how much the head moves the answer (patching its output from the clean run into the
corrupted one; knocking it out of the clean run), and which heads look without mattering or
matter without looking.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: A head "looks" when the last position gives the answer's source at least this weight.
LOOK = 0.3
#: A head "matters" when patching its output restores at least this share (in magnitude).
MATTER = 0.3
#: Below these a head neither looks nor matters.
FAINT_LOOK = 0.1
FAINT_MATTER = 0.1


@dataclass(frozen=True, eq=False)
class CauseResult:
    """``attention [layers, heads, n]``: each head's weights from the last position to every
    key of the clean prompt; ``sources``: the positions holding the answer token;
    ``looks [layers, heads]``: the weight on them; ``patch`` (a PatchResult of ``head_out``)
    and ``sweep`` (a SweepResult: the answer's log-probability with each head knocked out)."""

    attention: np.ndarray  # [layers, heads, n]
    tokens: tuple[str, ...]
    sources: tuple[int, ...]
    looks: np.ndarray  # [layers, heads]
    patch: object
    sweep: object

    @property
    def effect(self) -> np.ndarray:
        """``[layers, heads]``: the share of the answer restored by patching each head."""
        return np.asarray(self.patch)


def attention_to(attention: np.ndarray, sources) -> np.ndarray:
    """``[layers, heads]``: the weight ``attention [layers, heads, n]`` puts on ``sources``."""
    attention = np.asarray(attention, np.float64)
    if not len(sources):
        return np.zeros(attention.shape[:2])
    return attention[:, :, list(sources)].sum(axis=-1)


def flags(
    looks: np.ndarray, effect: np.ndarray
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(heads that look but do not matter, heads that matter without looking), each a list of
    (layer, head): looking is ``looks >= LOOK``, mattering ``|effect| >= MATTER``; the
    opposite is below ``FAINT_MATTER`` / ``FAINT_LOOK``."""
    looks, effect = np.asarray(looks), np.abs(np.asarray(effect))
    idle = (looks >= LOOK) & (effect < FAINT_MATTER)
    blind = (effect >= MATTER) & (looks < FAINT_LOOK)
    pairs = lambda mask: [(int(a), int(b)) for a, b in zip(*np.nonzero(mask), strict=True)]  # noqa: E731
    return pairs(idle), pairs(blind)


def cause_estimate(loaded, clean: str, options: dict) -> float:
    """Seconds :func:`attention_beside_cause` should take (a patching map and a sweep)."""
    from attention_explorer.causal import patch_estimate
    from attention_explorer.pretrained import sweep_estimate

    return patch_estimate(loaded, clean, "head_out", **options) + sweep_estimate(
        loaded, clean, **options
    )


def attention_beside_cause(
    loaded, clean, corrupted, answer, wrong, progress, cancelled, options: dict
) -> CauseResult:
    """Every head's attention to the answer's source and its effect on the answer (see the
    module docstring); ``progress(done, total)`` over the patching then the sweep."""
    from attention_explorer.causal import patch
    from attention_explorer.pretrained import model_run, run_sweep

    run = model_run(loaded, clean, logits=False, **options)
    last = np.asarray(run.attentions)[:, :, -1, :]  # [layers, heads, n]
    cells = last.shape[0] * last.shape[1]
    patched = patch(
        loaded,
        clean,
        corrupted,
        site="head_out",
        answer=answer,
        wrong=wrong,
        progress=lambda done, _total: progress(done, 2 * cells),
        cancelled=cancelled,
        **options,
    )
    sweep = run_sweep(
        loaded,
        clean,
        "logprob",
        target=answer,
        position=-1,
        progress=lambda done, _total: progress(cells + done, 2 * cells),
        cancelled=cancelled,
        **options,
    )
    sources = tuple(i for i, t in enumerate(run.ids) if t == patched.answer_id)
    return CauseResult(
        last, tuple(run.tokens), sources, attention_to(last, sources), patched, sweep
    )
