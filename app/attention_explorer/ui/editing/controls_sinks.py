"""The Controls panel's "Sinks" row (gpt-oss's attention sinks): off, or a learned logit per
head that joins each softmax row, so a row's weights sum to 1 minus what its head's sink
takes (the ``sink_weight`` stage; the logits are the ``sinks`` tab of the matrix editor).

Turned on, every head's logit starts at 0: a sink that scores like a key with score 0, so
its share is visible at once (a model's own sinks come with the model). Turned off, the
logits go. The engine refuses sinks with a normaliser other than softmax; the panel shows
that refusal and leaves the session as it was.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker

from attention_explorer.ui.editing.controls_parts import FittingCombo, combo, select

#: The row's options: the config's ``attention_sinks`` value and its label.
SINK_LABELS = {False: "Off", True: "Learned logit per head"}

#: Where a newly turned-on sink's logit starts (a key scoring 0 takes as much).
FIRST_SINK_LOGIT = 0.0


def with_sinks(data, on: bool):
    """``data`` (a SessionData) with attention sinks ``on`` (every head's logit at
    :data:`FIRST_SINK_LOGIT`, or the logits it has) or off (no logits)."""
    config = data.config.with_changes(attention_sinks=bool(on))
    if not on:
        sinks = None
    elif data.inputs.sinks is not None and len(data.inputs.sinks) == config.heads:
        sinks = data.inputs.sinks
    else:
        sinks = np.full(config.heads, FIRST_SINK_LOGIT)  # [heads]
    return data.with_changes(config=config, inputs=data.inputs.with_changes(sinks=sinks))


class SinksRow:
    """The "Sinks" combo box bound to the panel's ``apply(label, change, *args)`` (one undo
    step, refusals reported); :meth:`sync` shows a config's value without writing back."""

    def __init__(self, apply):
        self.box: FittingCombo = combo(
            SINK_LABELS,
            "Attention sinks (gpt-oss): each head's learned logit joins its softmax rows and "
            "takes a share of every row (edit the logits in the sinks tab)",
        )
        self.box.currentIndexChanged.connect(
            lambda *_: apply("Sinks", with_sinks, self.box.currentData())
        )

    def sync(self, config) -> None:
        """Show ``config``'s ``attention_sinks``."""
        blocker = QSignalBlocker(self.box)
        select(self.box, bool(config.attention_sinks))
        del blocker
