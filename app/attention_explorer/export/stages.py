"""Which stages and heads can be exported, and their axis names (read from the catalogue)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from attention_explorer.engine.trace import ALL_STAGES, PER_HEAD_STAGES, Trace
from attention_explorer.export.errors import ExportError
from attention_explorer.stages import stage as catalogue_stage

#: Other names people use for a stage.
ALIASES = {
    "head_output": "head_outputs",
    "heads_output": "head_outputs",
    "attention": "weights",
    "probabilities": "weights",
    "W_O": "output",
    "wo": "output",
}


def resolve_stage(trace: Trace, stage: str) -> str:
    """The canonical name of ``stage``; ExportError when unknown or not computed."""
    name = ALIASES.get(stage, ALIASES.get(stage.lower(), stage))
    if name not in ALL_STAGES:
        lowered = {s.lower(): s for s in ALL_STAGES}
        name = lowered.get(name.lower(), name)
    if name not in ALL_STAGES:
        raise ExportError(f"unknown stage {stage!r}; choose from {', '.join(ALL_STAGES)}")
    if not trace.has(name):
        raise ExportError(f"stage {name!r} is not part of this trace; {_why_missing(trace, name)}")
    return name


def _why_missing(trace: Trace, name: str) -> str:
    if name == "output":
        return "the session has no output projection W_O"
    if name in ("X", "X_kv"):
        return "it exists only in projection mode (X_kv: cross-attention only)"
    return f"computed stages: {', '.join(computed_stages(trace))}"


def computed_stages(trace: Trace) -> tuple[str, ...]:
    """Every stage of ``trace`` that holds data, in pipeline order."""
    return tuple(s for s in ALL_STAGES if trace.has(s))


def is_per_head(stage: str) -> bool:
    """True when ``stage`` has one matrix per head."""
    return stage in PER_HEAD_STAGES


def resolve_head(trace: Trace, stage: str, head: int | None) -> int | None:
    """The head to show for ``stage`` (None for shared stages); ExportError when not computed."""
    if not is_per_head(stage):
        return None
    if head is None:
        return trace.heads[0]
    if isinstance(head, bool) or not isinstance(head, (int, np.integer)):
        raise ExportError(f"head must be a whole number, got {head!r}")
    if int(head) not in trace.heads:
        raise ExportError(f"head {head} is not in this trace; heads: {_heads_text(trace.heads)}")
    return int(head)


def resolve_heads(trace: Trace, heads: Iterable[int] | str | None) -> tuple[int, ...]:
    """``"all"``/None -> every computed head; otherwise each head checked."""
    if heads is None or heads == "all":
        return tuple(trace.heads)
    chosen = []
    for head in heads:
        if int(head) not in trace.heads:
            raise ExportError(
                f"head {head} is not in this trace; heads: {_heads_text(trace.heads)}"
            )
        chosen.append(int(head))
    return tuple(dict.fromkeys(chosen))


def _heads_text(heads: tuple[int, ...]) -> str:
    if heads and heads == tuple(range(heads[0], heads[-1] + 1)) and len(heads) > 2:
        return f"{heads[0]}..{heads[-1]}"
    return ", ".join(str(h) for h in heads) or "(none)"


def axis_names(stage: str) -> tuple[str, str]:
    """(row axis, column axis) names for pictures and CSV headers, from the catalogue."""
    entry = catalogue_stage(stage)
    return entry.rows, entry.cols


def is_signed(stage: str) -> bool:
    """True for stages drawn on a diverging map centred on 0 (the scores)."""
    return catalogue_stage(stage).kind == "signed"


def file_stem(stage: str, head: int | None) -> str:
    """The predictable file name (without suffix): ``weights_head0``, ``concat``, ``output``."""
    return f"{stage}_head{head}" if head is not None else stage
