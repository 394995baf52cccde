"""Trace: every named stage of one attention computation, as numpy arrays, built once.

The stage lists below are read from the stage catalogue (:mod:`attention_explorer.core.stages`),
so a stage is declared in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from attention_explorer.core.stages import CATALOGUE
from attention_explorer.engine.backend import Backend
from attention_explorer.engine.config import AttentionConfig
from attention_explorer.engine.inputs import AttentionInputs
from attention_explorer.engine.preview import StagePreview

#: Every stage name, in pipeline order.
ALL_STAGES = tuple(CATALOGUE)
#: Stages kept per head, each ``[s, rows, cols]`` for the ``s`` heads in ``Trace.heads``.
PER_HEAD_STAGES = tuple(name for name, entry in CATALOGUE.items() if entry.per_head)
#: Stages shared by all heads.
SHARED_STAGES = tuple(name for name, entry in CATALOGUE.items() if not entry.per_head)
#: The per-head stages with one row per query and one column per key.
SQUARE_STAGES = tuple(name for name in PER_HEAD_STAGES if CATALOGUE[name].cols == "keys")


@dataclass(frozen=True)
class Trace:
    """The result of :func:`attention_explorer.engine.compute`; frozen once built.

    Shapes (n queries, m keys, s = len(heads)): ``X [n,d_model]`` as typed, with positional
    encoding on ``positions [n,d_model]`` (P) and ``X_pos [n,d_model]`` (X + P, what the
    projections read; both None when positions are off), ``X_kv [m,d_model]`` (as the
    projections read it), ``Q [s,n,d_k]``, ``K [s,m,d_k]``, ``V [s,m,d_v]`` (key/value heads
    already repeated per query head under grouped-query attention),
    ``scores``/``scaled``/``masked``/``weights`` ``[s,n,m]``, ``mask [n,m]`` (True = may
    attend), ``head_outputs [s,n,d_v]``, ``concat [n,h*d_v]``, ``output [n,d_out]``. Stages
    not asked for are None.

    ``previews`` holds the square stages (and the mask) at display resolution when the pass
    was asked for previews and the sequence is long (:mod:`.preview`); those square stages are
    then :class:`~attention_explorer.engine.recompute.RecomputedStage` objects that compute the
    rows read (index them like arrays; ``np.asarray`` gives the whole stage).

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
    stages: Mapping[str, np.ndarray | None] = field(default_factory=dict)
    previews: Mapping[str, StagePreview] = field(default_factory=dict)
    fully_masked_rows: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    scale: float = 1.0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        # A read-only view: no stage can be swapped after the trace is built.
        object.__setattr__(self, "stages", MappingProxyType(dict(self.stages)))
        object.__setattr__(self, "previews", MappingProxyType(dict(self.previews)))

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

    def preview(self, name: str) -> StagePreview | None:
        """Stage ``name`` at display resolution, when this pass made previews (else None)."""
        return self.previews.get(name)

    def row_labels(self, name: str) -> tuple[str, ...]:
        """Labels of the rows of stage ``name`` (query tokens, or key tokens for K/V/X_kv)."""
        return self.kv_tokens if CATALOGUE[name].rows == "keys" else self.tokens

    def col_labels(self, name: str) -> tuple[str, ...]:
        """Labels of the columns of stage ``name``: key tokens for score-like stages, else dims."""
        if CATALOGUE[name].cols == "keys":
            return self.kv_tokens
        if CATALOGUE[name].cols == "sink":  # one column: the head's sink (attention sinks)
            return ("sink",)
        width = self.stage(name, self.heads[0] if self.heads else 0).shape[-1]
        return tuple(str(i) for i in range(width))
