""" "Open this step's layer": a decoding step's layer opens in the explorer, and an edit of a
cached K or V number there reruns the generation.

:class:`StepOpener` builds the session with
:func:`~attention_explorer.generation.step_session.step_session` (the step's query against the
layer's cached K and V, every number editable) and opens it as the main window's document.
While that document is open, each change of its K or V becomes ``edit`` entries of the cache
policy (:func:`~attention_explorer.generation.step_session.edits_between`), and the generation
runs again with them (``state.set_policy``), so the steps after the edited position read the
edited vector; when the rerun is done it says which tokens changed (``reported`` and the
window's status line). Undoing the edit reruns with the policy as it was.

The window is used through what every main window has: ``document`` (``maybe_save``,
``replace``, ``replaced``), ``session`` (``data()``, ``events.inputs``) and ``status.show``.
:func:`connect_open_step` wires a :class:`~.cache_view.CacheView`'s ``open_requested`` to it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QApplication

from attention_explorer.generation import GenerationError
from attention_explorer.generation.step_session import (
    edits_between,
    policy_with_edits,
    step_session,
)
from attention_explorer.session.document import SessionData


def change_text(before, after, edits: list[dict]) -> str:
    """What an edit did to the generated tokens, in a sentence: ``before`` and ``after`` are
    the generations without and with ``edits``."""
    what = ", ".join(
        f"{'K' if 'key' in e else 'V'} of layer {e['layer']}, K/V head {e['head']}, "
        f"position {e['position']}"
        for e in edits[:3]
    ) + (" …" if len(edits) > 3 else "")
    n = before.prompt_length
    first = next(
        (i for i, (a, b) in enumerate(zip(before.generated, after.generated)) if a != b), None
    )
    if first is None:
        return f"Edited {what}: the generation ran again and writes the same tokens."
    was = " ".join(before.tokens[n + first : n + first + 6])
    now = " ".join(after.tokens[n + first : n + first + 6])
    return (
        f"Edited {what}: from step {first} on the generation now writes “{now}” (it wrote “{was}”)."
    )


class StepOpener(QObject):
    """Opens steps' layers in ``window`` for the generation of ``state`` and reruns the
    generation when their K or V is edited (see the module docstring)."""

    opened = Signal(object)  # the SessionData opened
    reported = Signal(str)  # a sentence: what an edit did, or why it could not

    def __init__(self, window, state, parent: QObject | None = None):
        super().__init__(parent if parent is not None else state)
        self.window, self.state = window, state
        self.origin: SessionData | None = None  # the step's session as opened
        self.layer = 0
        self.step = 0
        self.base_policy = None  # the policy before any edit made in this session
        self.before = None  # the generation before any edit made in this session
        self.edits: list[dict] = []
        self._pending = None  # a policy to apply once the running job ends
        self._awaiting = False
        self._opening = False
        window.session.events.inputs.connect(self._on_inputs)
        window.document.replaced.connect(self._on_replaced)
        state.changed.connect(self._on_state_changed)
        running = getattr(state, "running", None)
        if running is not None:
            running.connect(self._on_running)

    # -- opening ---------------------------------------------------------------------------
    def open(self, step: int, layer: int) -> bool:
        """Open layer ``layer`` of step ``step`` of the shown generation as the window's
        document. False (with the reason in the status line) when it cannot."""
        gen, loaded = self.state.generation, getattr(self.state, "loaded", None)
        if gen is None or loaded is None:
            return self._say("Generate first: there is no step to open.")
        # the replay runs the model up to the step on this thread (milliseconds for small
        # models, seconds for large ones): say so and show the busy cursor meanwhile
        self.window.status.show(f"Replaying the generation to step {step}, layer {layer}…")
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            data = step_session(loaded, gen, step, layer)
        except GenerationError as exc:
            self.window.status.show(str(exc), 15000)
            self.reported.emit(str(exc))
            return False
        finally:
            QApplication.restoreOverrideCursor()
        if not self.window.document.maybe_save():
            return False
        self._opening = True
        try:
            self.window.document.replace(data)
        finally:
            self._opening = False
        self.origin, self.step, self.layer = data, int(step), int(layer)
        self.base_policy, self.before, self.edits = self.state.policy, gen, []
        self.window.status.show(
            f"Step {step}, layer {layer} is open: edit a number of K or V (the cache) and the "
            "generation runs again from there.",
            15000,
        )
        self.opened.emit(data)
        return True

    def _on_replaced(self) -> None:
        if not self._opening:  # another document: its edits are not the cache's
            self.origin = None

    # -- edits -----------------------------------------------------------------------------
    def _on_inputs(self, *_args) -> None:
        if self.origin is None:
            return
        now = self.window.session.data()
        if now.tokens != self.origin.tokens or now.kv_tokens != self.origin.kv_tokens:
            self.origin = None  # reshaped: no longer the step's cache
            return
        edits = edits_between(self.origin, now, self.layer)
        q_changed = not _same(self.origin.inputs.Q, now.inputs.Q)
        if edits == self.edits:
            if q_changed:
                self._say(
                    "Q is this step's query, not part of the cache: its change stays in this "
                    "layer. Edit K or V to change the tokens that follow."
                )
            return
        self.edits = edits
        policy = policy_with_edits(self.base_policy, edits) if edits else self.base_policy
        self._rerun(policy)

    def _rerun(self, policy) -> None:
        if getattr(self.state, "busy", lambda: False)():
            self._pending = policy
            return
        self._pending = None
        self._awaiting = True
        if self.state.set_policy(policy) is False:
            self._pending, self._awaiting = policy, False

    def _on_running(self, busy: bool) -> None:
        if not busy and self._pending is not None:
            self._rerun(self._pending)

    def _on_state_changed(self) -> None:
        if not self._awaiting or getattr(self.state, "busy", lambda: False)():
            return
        self._awaiting = False
        gen = self.state.generation
        if gen is None or self.before is None:
            return
        if not self.edits:
            self._say("The cache is as the model wrote it again; the generation ran again.")
            return
        self._say(change_text(self.before, gen, self.edits))

    def _say(self, text: str) -> bool:
        self.window.status.show(text, 20000)
        self.reported.emit(text)
        return False


def _same(a, b) -> bool:
    """True when arrays ``a`` and ``b`` (or both None) hold the same numbers."""
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool((a == b).all())


def connect_open_step(window, state, cache_view) -> StepOpener:
    """A :class:`StepOpener` for ``window`` and ``state`` that ``cache_view``'s "Open this
    step's layer" button drives; its sentences also show under the cache view. The Generate
    window calls this once."""
    opener = StepOpener(window, state)
    cache_view.open_requested.connect(opener.open)
    cache_view.opener = opener
    opener.reported.connect(cache_view.message.setText)
    return opener
