"""Generation over a KV cache: ``ae.generate`` (loop.py), the incremental step (step.py),
cache policies (policy.py), sampling (sampling.py) and what a generation returns
(result.py), and what a cache costs per token (cache_size.py). Built on the model run's own
functions (``pretrained``)."""

from __future__ import annotations

from .cache_size import CacheShape, CacheSize, bytes_per_token
from .errors import GenerationError
from .loop import generate
from .policy import CachePolicy, parse_policy
from .result import Generation, LayerCache, Step

__all__ = [
    "CachePolicy",
    "CacheShape",
    "CacheSize",
    "Generation",
    "GenerationError",
    "LayerCache",
    "Step",
    "bytes_per_token",
    "generate",
    "parse_policy",
]
