"""Trace: every named stage of one attention computation, as numpy arrays."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attention_explorer.engine.backend import Backend
from attention_explorer.engine.config import AttentionConfig
from attention_explorer.engine.inputs import AttentionInputs

#: Stages kept per head, each ``[s, rows, cols]`` for the ``s`` heads in ``Trace.heads``.
PER_HEAD_STAGES = ("Q", "K", "V", "scores", "scaled", "masked", "weights", "head_outputs")
#: Stages shared by all heads.
SHARED_STAGES = ("X", "X_kv", "mask", "concat", "output")
#: Every stage name, in pipeline order.
ALL_STAGES = (
    "X", "X_kv", "Q", "K", "V", "scores", "scaled", "mask", "masked", "weights",
    "head_outputs", "concat", "output",
)  # fmt: skip
#: The stages with one row per query and one column per key.
SQUARE_STAGES = ("scores", "scaled", "masked", "weights")


@dataclass
class Trace:
    """The result of :func:`attention_explorer.engine.compute`.

    Shapes (n queries, m keys, s = len(heads)): ``X [n,d_model]``, ``X_kv [m,d_model]``,
    ``Q [s,n,d_k]``, ``K [s,m,d_k]``, ``V [s,m,d_v]`` (key/value heads already repeated per
    query head under grouped-query attention), ``scores``/``scaled``/``masked``/``weights``
    ``[s,n,m]``, ``mask [n,m]`` (True = may attend), ``head_outputs [s,n,d_v]``,
    ``concat [n,h*d_v]``, ``output [n,d_out]``. Stages not asked for are None.

    ``masked`` holds -inf where the mask hides a key. A query whose keys are all hidden gets a
    weight row of zeros (as torch's scaled_dot_product_attention does) and is listed in
    ``fully_masked_rows``.
    """

    config: AttentionConfig
    inputs: AttentionInputs | None
    backend: Backend
    dtype: str
    heads: tuple[int, ...]
    tokens: tuple[str, ...]
    kv_tokens: tuple[str, ...]
    stages: dict[str, np.ndarray | None] = field(default_factory=dict)
    fully_masked_rows: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    scale: float = 1.0
    seconds: float = 0.0

    @property
    def n_queries(self) -> int:
        """Number of query tokens n."""
        return len(self.tokens)

    @property
    def n_keys(self) -> int:
        """Number of key tokens m."""
        return len(self.kv_tokens)

    def __getitem__(self, name: str) -> np.ndarray | None:
        return self.stages.get(name)

    def has(self, name: str) -> bool:
        """True when stage ``name`` was computed."""
        return self.stages.get(name) is not None

    def head_index(self, head: int) -> int:
        """Position of query head ``head`` inside the per-head stage arrays."""
        try:
            return self.heads.index(head)
        except ValueError:
            raise KeyError(f"head {head} was not computed; computed heads: {self.heads}") from None

    def stage(self, name: str, head: int | None = None) -> np.ndarray:
        """One stage as a 2-D array: per-head stages need ``head``; shared ones ignore it."""
        array = self.stages.get(name)
        if array is None:
            raise KeyError(f"stage {name!r} was not computed")
        if name in PER_HEAD_STAGES:
            return array[self.head_index(0 if head is None else head)]
        return array

    def row_labels(self, name: str) -> tuple[str, ...]:
        """Labels of the rows of stage ``name`` (query tokens, or key tokens for K/V/X_kv)."""
        return self.kv_tokens if name in ("K", "V", "X_kv") else self.tokens

    def col_labels(self, name: str) -> tuple[str, ...]:
        """Labels of the columns of stage ``name``: key tokens for score-like stages, else dims."""
        if name in SQUARE_STAGES or name == "mask":
            return self.kv_tokens
        width = self.stage(name, self.heads[0] if self.heads else 0).shape[-1]
        return tuple(str(i) for i in range(width))
