"""A generation one token at a time: :class:`Stepper` holds the KV cache between steps, so the
window's Step adds one token without recomputing the prompt, and ``ae.generate(steps=N)`` is
exactly N of its steps (:func:`~.loop.generate` runs on it: one code path; the pieces of a
step are :mod:`.decode`'s).

The first :meth:`Stepper.step` is the prefill (every layer on all the prompt's tokens, filling
the cache) and chooses the first token; each later step feeds the token chosen last as one new
query against the cache. The sampling settings and the seeded generator are fixed when the
stepper is made, so N steps draw the same numbers as ``generate(steps=N)`` and give the same
tokens, rows and caches, to the bit. :meth:`Stepper.result` is the :class:`~.result.Generation`
of the steps so far, as ``generate`` returns it; stepping on after it leaves it unchanged.

Without ``steps`` (the window does not know how many Steps a learner will take) the cache
starts with room for :data:`FIRST_ROOM` more positions and doubles when full; with it, the
cache is made once at the size ``generate`` needs and a model's learned positions are checked
before anything runs.
"""

from __future__ import annotations

import os
from dataclasses import fields

import numpy as np

from attention_explorer.engine import AttentionInputError
from attention_explorer.engine.backend import ArrayLib
from attention_explorer.pretrained.forward import embed
from attention_explorer.pretrained.open_model import LoadedModel, load_model, model_backend

from .decode import (
    DTYPES,
    MOST_STEPS,
    Vocabulary,
    check_steps,
    embed_at,
    forward_new,
    held,
    layer_caches,
    release,
)
from .errors import GenerationError
from .policy import parse_policy
from .result import Generation, Step
from .sampling import check_settings, choose, distribution
from .step import host, new_caches, refusal, widths

#: Positions a stepper without ``steps`` makes room for after the prompt, before it doubles.
FIRST_ROOM = 32


def _grown(w, caches, room: int) -> list:
    """``caches`` copied into new ones of ``room`` positions: every buffer of each layer's
    cache (keys, values and whatever else a family caches per position) keeps its filled
    positions, found as the one axis whose size the new buffer changes."""
    bigger = new_caches(w, room, caches[0].keys)
    for old, new in zip(caches, bigger):
        for f in fields(old):
            was, now = getattr(old, f.name), getattr(new, f.name)
            if not hasattr(was, "shape") or not hasattr(now, "shape"):
                continue
            axis = next((i for i, (a, b) in enumerate(zip(was.shape, now.shape)) if a != b), None)
            if axis is None:  # not per position: the same buffer
                setattr(new, f.name, was)
                continue
            index = (slice(None),) * axis + (slice(0, old.length),)
            now[index] = was[index]
        new.length = old.length
    return bigger


class Stepper:
    """A generation after ``prompt`` that :meth:`step` extends by one token (the arguments are
    :func:`~.loop.generate`'s; ``steps``, optional, is the most steps that will be taken;
    ``keep_bytes``: the held weights stay with the model when they fit, as :func:`.decode.held`).
    The arguments are checked here (a GenerationError naming the one that is wrong); the
    model's weights are converted and held at the first step and let go by :meth:`close`."""

    def __init__(
        self,
        model: str | os.PathLike | LoadedModel,
        prompt: str,
        *,
        temperature: float = 0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int = 0,
        cache_policy=None,
        backend="numpy",
        dtype: str = "float32",
        steps: int | None = None,
        keep_bytes: int | None = None,
    ):
        self.temperature, self.top_k, self.top_p = check_settings(temperature, top_k, top_p, seed)
        if steps is not None:
            steps = check_steps(steps)
        if dtype not in DTYPES:
            raise GenerationError("dtype", f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
        if not isinstance(prompt, str):
            raise GenerationError(
                "prompt", f"the prompt must be a string, not {type(prompt).__name__}"
            )
        self.loaded = loaded = load_model(model)
        why = refusal(loaded.weights)
        if why:
            raise GenerationError("model", why)
        self.engine = model_backend(backend)
        try:
            ArrayLib(self.engine, dtype)
        except AttentionInputError as exc:
            raise GenerationError("backend", str(exc)) from None
        self.dtype = dtype
        self.toks = loaded.tokenize(prompt)
        if not self.toks.ids:
            raise GenerationError("prompt", "the prompt has no tokens: type some text first")
        n = len(self.toks.ids)
        w0 = loaded.weights
        self.learned = None if w0.position is None else len(w0.position)
        # positions fed: the prompt and every generated token but the last
        self.room = n + (steps if steps is not None else FIRST_ROOM) - 1
        if steps is not None:
            self._check_positions(n + steps - 1, steps)
            most = self.room
        else:
            most = self.learned if self.learned is not None else n + MOST_STEPS - 1
        sizes = {"layers": w0.n_layers, "kv_heads": w0.kv_heads, "positions": most}
        d_k, d_v = widths(w0)  # a latent layer's up-projected widths (it has no W_K, W_V)
        sizes |= {"d_k": d_k, "d_v": d_v}
        self.policy = parse_policy(cache_policy, sizes)
        self.rng = np.random.default_rng(seed)
        self.vocabulary = Vocabulary(loaded)
        self.ids: list[int] = list(self.toks.ids)
        self.steps: list[Step] = []
        self.keep_bytes = keep_bytes
        self.w = None  # the held weights, from the first step
        self.caches: list = []

    @property
    def prompt_length(self) -> int:
        """The prompt's number of tokens."""
        return len(self.toks.ids)

    def _check_positions(self, need: int, steps: int) -> None:
        """A GenerationError when ``need`` positions are more than the model learned."""
        if self.learned is not None and need > self.learned:
            room = self.learned - self.prompt_length + 1
            fit = f"at most {room} fit" if room > 0 else "the prompt alone is too long"
            raise GenerationError(
                "steps",
                f"{self.loaded.name} has {self.learned} learned positions; a prompt of "
                f"{self.prompt_length} tokens and {steps} steps need {need} ({fit})",
            )

    def step(self) -> Step:
        """Choose the next token (the first call runs the prompt through the model) and return
        its :class:`~.result.Step`; a GenerationError when the model cannot take one more."""
        i = len(self.steps)
        if i >= MOST_STEPS:
            raise GenerationError("steps", f"steps must be 1 to {MOST_STEPS}, not {i + 1}")
        fed = len(self.ids)  # positions fed after this step
        self._check_positions(fed, i + 1)
        dtype = np.dtype(self.dtype)
        lengths = None if self.w is None else [c.length for c in self.caches]
        try:
            if self.w is None:
                self.w = held(self.loaded, self.dtype, self.engine, self.keep_bytes)
                h = embed(self.w, self.toks.ids, self.toks.type_ids, dtype)  # [n, d]
                if self.engine.name == "torch":
                    import torch

                    h = torch.as_tensor(h).to(self.engine.device)
                self.caches = new_caches(self.w, self.room, h)
            else:
                h = embed_at(self.w, self.ids[-1], fed - 1, dtype)  # [1, d]
                if fed > self.room:
                    self.room = max(fed, 2 * self.room)
                    self.caches = _grown(self.w, self.caches, self.room)
            rows, logits = forward_new(self.w, h, self.caches, self.policy)
        except BaseException as exc:
            self._undo(lengths)  # a step that fails part-way leaves no layer a step ahead
            if isinstance(exc, AttentionInputError):
                raise GenerationError("backend", str(exc)) from None
            raise
        logits = host(logits)[0].astype(np.float64)  # [vocab]
        probs = distribution(logits, self.temperature, self.top_k, self.top_p)  # [vocab]
        token, rank = choose(probs, logits, self.temperature == 0, self.rng)
        attentions = np.stack([host(r) for r in rows])  # [layers, heads, m]
        text = self.vocabulary.token_text(token)
        made = Step(fed - 1, attentions, probs, logits, token, text, rank)
        self.steps.append(made)
        self.ids.append(token)
        return made

    def _undo(self, lengths: list[int] | None) -> None:
        """Put the caches back as they were before a step that failed (``lengths``: each
        layer's filled length then; None: it was the first step, so start again)."""
        if lengths is None:
            self.w, self.caches = None, []
            return
        for cache, length in zip(self.caches, lengths, strict=False):
            cache.length = length

    def result(self) -> Generation:
        """The :class:`~.result.Generation` of the steps taken so far (what ``generate`` with
        that many steps returns); a GenerationError before the first step."""
        if not self.steps:
            raise GenerationError("steps", "no token has been generated yet: take a step first")
        fed = len(self.ids) - 1
        cache = layer_caches(self.w, self.caches, self.policy, fed)
        tokens = tuple(self.toks.tokens) + tuple(s.text for s in self.steps)
        return Generation(
            self.loaded.name,
            tuple(self.ids),
            tokens,
            self.prompt_length,
            tuple(self.steps),
            cache,
            self.policy,
            self.dtype,
        )

    def close(self) -> None:
        """Let go of the held weights that are too large to keep in the model (this stepper
        holds them until it is dropped)."""
        release(self.loaded)
