"""Generation over a KV cache: ``ae.generate`` (loop.py), the incremental step (step.py),
cache policies (policy.py), sampling (sampling.py) and what a generation returns
(result.py). Built on the model run's own functions (``pretrained``)."""

from __future__ import annotations

from .errors import GenerationError
from .loop import generate
from .policy import CachePolicy, parse_policy
from .result import Generation, LayerCache, Step

__all__ = [
    "CachePolicy",
    "Generation",
    "GenerationError",
    "LayerCache",
    "Step",
    "generate",
    "parse_policy",
]
