"""Which stages and heads can be exported, and their axis names (read from the catalogue)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from attention_explorer.core.stage_rules import why_missing
from attention_explorer.core.stages import CATALOGUE, stage as catalogue_stage
from attention_explorer.engine.trace import Trace
from attention_explorer.writing.export_errors import ExportError


def aliases() -> dict[str, str]:
    """Other names people use for a stage -> its name (each stage's ``aliases``)."""
    return {alias: name for name, entry in CATALOGUE.items() for alias in entry.aliases}


def resolve_stage(trace: Trace, stage: str) -> str:
    """The canonical name of ``stage`` (an alias or another case is fine); ExportError when
    unknown or not computed, saying why the trace lacks it."""
    other = aliases()
    name = other.get(stage, other.get(stage.lower(), stage))
    if name not in CATALOGUE:
        lowered = {s.lower(): s for s in CATALOGUE}
        name = lowered.get(name.lower(), name)
    if name not in CATALOGUE:
        raise ExportError(f"unknown stage {stage!r}; choose from {', '.join(CATALOGUE)}")
    if not trace.has(name):
        raise ExportError(f"stage {name!r} is not part of this trace; {why_missing(name, trace)}")
    return name


def computed_stages(trace: Trace) -> tuple[str, ...]:
    """Every stage of ``trace`` that holds data, in pipeline order."""
    return tuple(s for s in CATALOGUE if trace.has(s))


def is_per_head(stage: str) -> bool:
    """True when ``stage`` has one matrix per head."""
    return catalogue_stage(stage).per_head


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
