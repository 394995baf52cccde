"""Stage: the record of what one stage is (how it is named, laid out, coloured, shrunk and
written). The catalogue of every stage, the rules of its fields and the lookups are in
:mod:`attention_explorer.core.stages`."""

from __future__ import annotations

from dataclasses import dataclass

from attention_explorer.core.numbers import DEFAULT_DECIMALS
from attention_explorer.core.stage_colours import kind_cmap, kind_levels


@dataclass(frozen=True)
class Stage:
    """What one stage is: how it is named, laid out, coloured, shrunk and written."""

    name: str  #: the trace key and file-name stem ("weights")
    title: str  #: a learner-facing title ("weights"; see :func:`title`)
    formula: str  #: how it is computed, in one line
    per_head: bool  #: one matrix per head (else shared by all heads)
    rows: str  #: what a row is: "tokens" (the inputs), "queries", "keys"
    cols: str  #: what a column is: "keys", "dimension", "output dimension"
    kind: str  #: "signed", "unit" or "free" (see core/stage_colours.py)
    shrink: str  #: "max" or "mean"
    decimals: int = DEFAULT_DECIMALS  #: decimals of its numbers (cells, tooltips, exports)
    #: rows of probabilities that the per-row and log colour scales apply to (the weights);
    #: every other stage is always drawn on its linear levels
    scalable: bool = False
    #: the stage panel's group: "inputs" (folds away), "attention", "combine"; None: no view
    group: str | None = "attention"
    #: when a computation has it: a rule of :data:`attention_explorer.core.stage_rules.SHOWN`
    when: str = "always"
    #: the arrow caption naming the step that makes it (before a config is known)
    caption: str = ""
    #: a rule of :data:`attention_explorer.core.stage_rules.CAPTIONS` that writes the caption for
    #: a config ("× 1/√4"); "" keeps :attr:`caption`
    caption_rule: str = ""
    #: the settings upstream of it, said under its exported picture (stage_rules.SETTINGS)
    upstream: tuple[str, ...] = ()
    #: the builder of engine/explain.py that writes out one cell's arithmetic ("": none)
    explain: str = ""
    #: other names people use for it ("attention" for the weights)
    aliases: tuple[str, ...] = ()
    #: a short name for lists ("P"); "" means :attr:`name`
    short: str = ""
    #: its query row is compared before / after an experiment's change (the banner)
    compared: bool = False
    #: its columns are one block of d_v per head (the concatenation): drawn with dividers
    head_blocks: bool = False

    @property
    def short_name(self) -> str:
        """The name used in short lists ("P" for the positions)."""
        return self.short or self.name

    @property
    def default_cmap(self) -> str:
        """The colour map used when the user picked none."""
        return kind_cmap(self.kind)

    @property
    def fixed_levels(self) -> tuple[float, float] | None:
        """(0, 1) for unit stages; None where levels follow the data."""
        return kind_levels(self.kind)
