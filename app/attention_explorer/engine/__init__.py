"""The attention engine: pure computation on numpy or torch. It never imports Qt."""

from attention_explorer.engine.backend import (
    Backend,
    available_backends,
    torch_installed,
    torch_missing_reason,
)
from attention_explorer.engine.compute import compute
from attention_explorer.engine.config import AttentionConfig, divisors
from attention_explorer.engine.engine_errors import AttentionInputError, ComputeOverflow
from attention_explorer.engine.explain import CellExplanation, explain
from attention_explorer.engine.inputs import AttentionInputs, validate_inputs
from attention_explorer.engine.trace import (
    ALL_STAGES,
    PER_HEAD_STAGES,
    SHARED_STAGES,
    SQUARE_STAGES,
    Trace,
)

__all__ = [
    "ALL_STAGES",
    "PER_HEAD_STAGES",
    "SHARED_STAGES",
    "SQUARE_STAGES",
    "AttentionConfig",
    "AttentionInputError",
    "AttentionInputs",
    "Backend",
    "CellExplanation",
    "ComputeOverflow",
    "Trace",
    "available_backends",
    "compute",
    "divisors",
    "explain",
    "torch_installed",
    "torch_missing_reason",
    "validate_inputs",
]
