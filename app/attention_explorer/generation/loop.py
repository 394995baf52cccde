"""``ae.generate``: a prompt, then ``steps`` tokens one at a time over a KV cache.

The prompt runs once (the prefill: every layer on all its tokens, filling the cache); each
later step feeds the token just chosen as one new query against the cached keys and values
(:mod:`.step`). Tokens are chosen by :mod:`.sampling`; the cache read by each query follows
the policy (:mod:`.policy`). Exactly ``steps`` tokens are generated (no stop at an
end-of-text token), so the last generated token is never fed: ``prompt + steps - 1``
positions are fed, and the cache returned holds those of them the next query could still read
(all of them with the full policy and no sliding window; a sliding layer keeps its last
``window - 1``, as transformers' sliding-window cache does; a policy keeps what it keeps).

:func:`generate` is ``steps`` calls of :class:`~.stepper.Stepper`'s ``step`` (the window's
Step runs the same code); the pieces a step is made of are in :mod:`.decode`. The held
converted weights are kept with the model when they take at most ``KEEP_CONVERTED_BYTES``.
"""

from __future__ import annotations

import os

from attention_explorer.pretrained.checkpoint.stored import KEEP_CONVERTED_BYTES
from attention_explorer.pretrained.open_model import LoadedModel

# embed_at, forward_new and held: where the benchmark and the step replay import them from
from .decode import check_steps, embed_at, forward_new, held  # noqa: F401
from .result import Generation
from .stepper import Stepper


def generate(
    model: str | os.PathLike | LoadedModel,
    prompt: str,
    steps: int,
    temperature: float = 0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
    cache_policy=None,
    backend="numpy",
    dtype: str = "float32",
) -> Generation:
    """Generate ``steps`` tokens after ``prompt`` one at a time over a KV cache (see the
    module docstring and :class:`~.result.Generation`). ``temperature`` 0 is greedy;
    ``top_k``, ``top_p`` and ``seed`` shape and seed the sampling (:mod:`.sampling`);
    ``cache_policy`` chooses what each query reads (:mod:`.policy`); ``backend`` numpy or
    torch (``torch:cuda:0``), ``dtype`` float32 or float64. A GenerationError (one line) for
    a model or an argument that cannot be generated from exactly. It is ``steps`` calls of
    :meth:`.stepper.Stepper.step` (the window's Step runs the same code)."""
    steps = check_steps(steps)
    stepper = Stepper(
        model,
        prompt,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        cache_policy=cache_policy,
        backend=backend,
        dtype=dtype,
        steps=steps,
        keep_bytes=KEEP_CONVERTED_BYTES,
    )
    try:
        for _ in range(steps):
            stepper.step()
        return stepper.result()
    finally:
        stepper.close()
