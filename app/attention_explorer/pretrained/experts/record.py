"""Seeing the router's choice: within :func:`recording`, every routed feed-forward that runs
appends a :class:`Routing` (its experts and weights per token) to the list it yields. The
model output panel reruns one layer this way to show the choice at the selected token."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

_ACTIVE: ContextVar[list | None] = ContextVar("experts_recording", default=None)


@dataclass(frozen=True)
class Routing:
    """One routed feed-forward's choice: ``experts [n, k]`` (ids, largest weight first),
    ``weights [n, k]`` (what each expert's output is multiplied by), ``logits [n, E]`` (the
    router's), and how many ``shared`` experts every token also runs."""

    experts: np.ndarray
    weights: np.ndarray
    logits: np.ndarray
    shared: int = 0


def _host(x) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else x.detach().cpu().numpy()


def note(experts, weights, logits, shared: int) -> None:
    """Append the choice to the active recording (nothing when none is active)."""
    active = _ACTIVE.get()
    if active is not None:
        active.append(Routing(_host(experts), _host(weights), _host(logits), shared))


@contextlib.contextmanager
def recording() -> Iterator[list[Routing]]:
    """Collect the routings of the routed feed-forwards run inside the block, in order."""
    routes: list[Routing] = []
    token = _ACTIVE.set(routes)
    try:
        yield routes
    finally:
        _ACTIVE.reset(token)
