"""ModelState: model mode's one evented state (psygnal, no Qt), shared through PanelContext.

It holds what every panel of model mode reads:

* ``loaded`` and ``text``: the model the Model panel loaded and the text it ran on;
* ``origin``: where the open layer's numbers come from (:class:`ModelOrigin`: model name,
  folder, text, layer), with ``origin_data``, the model's own numbers of that layer;
* ``knockouts``: the knocked-out heads, a frozenset of (layer, head);
* the edits: :meth:`ModelState.edits`, the open layer's numbers when they differ from the
  model's.

The knockouts live in the open session's ``experiment["model"]`` record (undone with it, and
saved with the session as ``knockout``: [layer, head] pairs);
:func:`read_record` and :meth:`ModelState.set_knockouts` are the one place that reads and
writes that record. The state follows the session, so an undo, a load or a new document
updates it and emits the event.

A new panel of model mode (activation patching, generation, ...) plugs in here: it takes the
window's PanelContext, reads ``context.model`` and connects to ``context.model.events``
(``loaded``, ``origin``, ``knockouts``) and, for edits of the numbers, to the session's own
events. What it adds to the document (patched positions, a generated continuation) becomes one
more typed field of :class:`ModelRecord`, parsed in :func:`read_record` and written by a
``set_...`` method here, as an undo step of the history.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from psygnal import Signal, SignalGroup

from attention_explorer.engine.inputs import AttentionInputs
from attention_explorer.session.document import SessionData
from attention_explorer.session.evented_session import Session
from attention_explorer.session.history import History

Knockouts = frozenset[tuple[int, int]]

#: Significant digits a session file may store a model's numbers with and still hold them:
#: the example builders write 7 (``f"{value:.7g}"``), at most half a unit of the 7th digit
#: (5e-7 of the value) from the checkpoint's float32 numbers, which need 9 to be exact.
STORED_DIGITS = 7
#: Half a unit of the last stored digit, relative to the number (with room for the rounding
#: of the float64 difference itself).
_STORED_TOLERANCE = 0.5 * 10.0 ** (1 - STORED_DIGITS) * (1 + 1e-9)


def same_numbers(now: AttentionInputs, was: AttentionInputs) -> bool:
    """True when ``now`` holds the numbers of ``was`` as a session file stores them: the same
    arrays, each number equal to :data:`STORED_DIGITS` significant digits (a file written
    with fewer digits than float32 needs is not an edit; any number a learner types is)."""
    mine, theirs = now.arrays(), was.arrays()
    if mine.keys() != theirs.keys():
        return False
    for name, a in mine.items():
        b = theirs[name]
        if a.shape != b.shape:
            return False
        if np.array_equal(a, b):
            continue
        largest = np.maximum(np.abs(a), np.abs(b))  # same shape as a
        if not np.all(np.abs(a - b) <= _STORED_TOLERANCE * largest):
            return False
    return True


@dataclass(frozen=True)
class ModelOrigin:
    """Which model, text and layer the open session's numbers were read from."""

    name: str
    folder: str
    text: str
    layer: int


@dataclass(frozen=True)
class ModelRecord:
    """A model session's ``experiment["model"]`` record, typed (what :func:`read_record`
    finds; a field the record lacks, or holds in the wrong type, is None or empty)."""

    name: str = ""
    folder: str = ""
    text: str | None = None
    layer: int | None = None
    knockouts: Knockouts = frozenset()

    def origin(self) -> ModelOrigin | None:
        """The origin this record names (None without a layer or a text)."""
        if self.layer is None or self.text is None:
            return None
        return ModelOrigin(self.name, self.folder, self.text, self.layer)


def _index(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _knockouts(pairs) -> Knockouts:
    if not isinstance(pairs, (list, tuple)):
        return frozenset()
    return frozenset(
        (pair[0], pair[1])
        for pair in pairs
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(map(_index, pair))
    )


def read_record(data: SessionData | Session) -> ModelRecord | None:
    """The typed ``experiment["model"]`` record of ``data`` (None for a session that is not
    a model's)."""
    experiment = data.experiment if isinstance(data.experiment, dict) else {}
    info = experiment.get("model")
    if not isinstance(info, dict):
        return None
    layer = info.get("layer")
    return ModelRecord(
        name=str(info.get("name") or ""),
        folder=str(info.get("folder") or ""),
        text=info["text"] if isinstance(info.get("text"), str) else None,
        layer=layer if isinstance(layer, int) and not isinstance(layer, bool) else None,
        knockouts=_knockouts(info.get("knockout", ())),
    )


def with_knockouts(experiment: dict, knockouts: Knockouts) -> dict:
    """A copy of ``experiment`` whose model record lists ``knockouts`` (sorted pairs)."""
    experiment = dict(experiment)
    info = dict(experiment.get("model", {}))
    info["knockout"] = [list(pair) for pair in sorted(knockouts)]
    experiment["model"] = info
    return experiment


class ModelEvents(SignalGroup):
    """``loaded(loaded_model)`` after a Load; ``origin(ModelOrigin | None)`` when a layer is
    opened or the document replaced; ``knockouts(frozenset)`` when the knocked-out heads
    change (a knockout, its undo, another document)."""

    loaded = Signal(object)
    origin = Signal(object)
    knockouts = Signal(frozenset)


class ModelState:
    """Model mode's state over ``session`` (the open document) and its undo ``history``."""

    def __init__(self, session: Session, history: History):
        self.session, self.history = session, history
        self.events = ModelEvents()
        self.loaded = None  # the LoadedModel of the overview
        self.text = ""  # the text the overview was computed on
        self.origin: ModelOrigin | None = None
        self.origin_data: SessionData | None = None  # the model's own numbers of that layer
        self.knockouts: Knockouts = self._read_knockouts()
        session.events.experiment.connect(self._on_experiment)

    # -- reading ----------------------------------------------------------------------------
    def record(self) -> ModelRecord | None:
        """The open session's model record (None when it is not a model session)."""
        return read_record(self.session)

    def active(self) -> bool:
        """True while a layer of the loaded model is open (its run can be followed)."""
        return self.origin is not None and self.loaded is not None

    def is_edited(self) -> bool:
        """True when the open session's numbers differ from the model's (compared at the
        precision a session file stores them with: :func:`same_numbers`)."""
        if self.origin_data is None:
            return False
        now, was = self.session.data(), self.origin_data
        return (now.tokens, now.config) != (was.tokens, was.config) or not same_numbers(
            now.inputs, was.inputs
        )

    def edited_layer(self) -> int | None:
        """The open layer when its numbers differ from the model's, else None."""
        if not self.active() or not self.is_edited():
            return None
        return self.origin.layer

    def edits(self) -> dict[int, SessionData]:
        """The edits to run the model with: {layer: the open session's numbers}, or {}."""
        layer = self.edited_layer()
        return {} if layer is None else {layer: self.session.data()}

    # -- writing ----------------------------------------------------------------------------
    def set_loaded(self, loaded, text: str) -> None:
        """The Model panel loaded ``loaded`` and ran it on ``text``."""
        self.loaded, self.text = loaded, text
        self.events.loaded.emit(loaded)

    def set_origin(self, data: SessionData | None) -> None:
        """The open session's numbers are the model's own ``data`` (a layer the Model panel
        built), or not (None: another document is open)."""
        record = read_record(data) if data is not None else None
        origin = record.origin() if record is not None else None
        if data is not None and origin is None:  # a layer the panel built always names them
            origin = ModelOrigin(record.name if record else "", "", self.text, 0)
        self.origin, self.origin_data = origin, data
        self.events.origin.emit(origin)

    def set_knockouts(self, knockouts: Knockouts, label: str) -> None:
        """Record ``knockouts`` in the open session's model record: one undo step ``label``."""
        experiment = with_knockouts(self.session.experiment, frozenset(knockouts))
        with self.history.transaction(label):
            self.session.experiment = experiment

    # -- following the session --------------------------------------------------------------
    def _read_knockouts(self) -> Knockouts:
        record = self.record()
        return record.knockouts if record is not None else frozenset()

    def _on_experiment(self, *_args) -> None:
        knockouts = self._read_knockouts()
        if knockouts != self.knockouts:
            self.knockouts = knockouts
            self.events.knockouts.emit(knockouts)
