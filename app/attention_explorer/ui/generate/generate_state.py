"""GenerateState: the Generate window's one state, shared by its panel and the cache view.

The contract (what a view of the generation reads and may call):

* ``changed()`` (Qt signal, no arguments): emitted on the GUI thread after any of the
  attributes below changed (a new or longer generation, another selected step, another
  policy, a new model). A view redraws from the attributes; it never keeps its own copy.
* ``generation``: the :class:`~attention_explorer.generation.result.Generation` shown (None
  before the first Step or Run, and after another model is loaded). It was made with
  ``policy`` (its ``.policy`` is the parsed form).
* ``reference``: the same prompt, settings and number of steps with the full cache (what a
  policy's effect is compared against): None when ``policy`` is None (``generation`` is then
  the full cache's own).
* ``selected_step`` (int): the index into ``generation.steps`` of the step the user chose
  (the newest after each Step or Run); -1 when there is no generation.
* ``policy``: the cache policy dict (``{"window": W}``, ``{"sinks": S, "window": W}``,
  ``{"evict": [...]}``, ``{"edit": [...]}``: see :mod:`attention_explorer.generation.policy`)
  or None for the full cache.
* ``settings``: the :class:`GenerateSettings` ``generation`` was made with (None before).
* ``select_step(i)``: choose step ``i`` (clamped to the steps there are); emits ``changed``.
* ``set_policy(policy)``: from now on generate with ``policy``; when a generation is shown,
  the same prompt and settings are run again for as many steps with the new policy (and the
  full cache beside it as ``reference``) on the worker thread, and ``changed`` follows when it
  is done. A policy the model cannot take is reported by ``failed`` and leaves everything as
  it was.
* ``busy()``: True while a job runs; ``running(bool)`` when that changes; ``progress(done,
  total)`` during a job; ``failed(message)``: one line (a GenerationError's), never a
  traceback; ``note(message)``: one line about a job that ended otherwise (stopped early).

The panel drives it with :meth:`run` (N steps from the prompt), :meth:`step` (one more token,
continuing the shown generation when the prompt and settings are unchanged) and
:meth:`cancel`. The steps run on a :class:`~attention_explorer.generation.stepper.Stepper`,
kept between Steps, so a Step never recomputes the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from attention_explorer.generation import GenerationError
from attention_explorer.generation.stepper import Stepper
from attention_explorer.ui.widgets.job_worker import JobWorker


@dataclass(frozen=True)
class GenerateSettings:
    """What a generation is made from, besides the model and the cache policy: the prompt,
    the sampling (``temperature`` 0 is greedy; ``top_k``/``top_p`` None are off) and its seed,
    and the backend and dtype it runs on."""

    prompt: str
    temperature: float = 0.0
    top_k: int | None = None
    top_p: float | None = None
    seed: int = 0
    backend: str = "numpy"
    dtype: str = "float32"

    def arguments(self) -> dict:
        """The keyword arguments of ``ae.generate`` / :class:`Stepper` these settings give."""
        return {
            "temperature": self.temperature,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "seed": self.seed,
            "backend": self.backend,
            "dtype": self.dtype,
        }


@dataclass(frozen=True)
class _Done:
    """A job's answer: its steppers and what they were made with, the generations made, how
    many steps were asked and taken, and why it stopped early ("" when it did not fail)."""

    request: int
    steppers: tuple
    settings: GenerateSettings
    policy: object
    generation: object
    reference: object
    asked: int
    taken: int
    stopped: str = ""


class GenerateState(QObject):
    """The generation shown for model mode's ``model_state`` (its ``loaded`` model); see the
    module docstring for the contract."""

    changed = Signal()
    running = Signal(bool)
    progress = Signal(int, int)
    failed = Signal(str)
    note = Signal(str)

    def __init__(self, model_state, parent: QObject | None = None):
        super().__init__(parent)
        self.model_state = model_state
        self.generation = None
        self.reference = None
        self.selected_step = -1
        self.policy: dict | None = None
        self.settings: GenerateSettings | None = None
        self._steppers: tuple = ()  # (with the policy, full cache or absent), kept for Step
        self._request = 0
        self._busy = False
        self._release_when_done = False  # the window closed while a job ran
        self.worker = JobWorker("generation", self)
        self.worker.finished.connect(self._done)
        self.worker.failed.connect(self._failed)
        self.worker.progress.connect(self.progress)
        events = getattr(model_state, "events", None)
        if events is not None:
            events.loaded.connect(lambda *_: self.forget())

    # -- reading ----------------------------------------------------------------------------
    @property
    def loaded(self):
        """The model generations are made with (the Model panel's), or None."""
        return self.model_state.loaded

    def busy(self) -> bool:
        """True while a job runs."""
        return self._busy

    def step_shown(self):
        """The selected :class:`Step` of ``generation``, or None."""
        if self.generation is None or not 0 <= self.selected_step < len(self.generation.steps):
            return None
        return self.generation.steps[self.selected_step]

    # -- the contract's calls ---------------------------------------------------------------
    def select_step(self, i: int) -> None:
        """Choose step ``i`` of the generation (clamped); emits ``changed``."""
        if self.generation is None:
            return
        i = max(0, min(int(i), len(self.generation.steps) - 1))
        if i != self.selected_step:
            self.selected_step = i
            self.changed.emit()

    def set_policy(self, policy) -> bool:
        """Generate with cache ``policy`` (None or ``"full"``: the full cache) from now on and
        run the shown generation again with it on the worker. False (nothing done) while a
        job runs."""
        if self._busy:
            return False
        policy = None if policy is None or policy == "full" else policy
        if self.generation is None or self.settings is None:
            self.policy = policy
            self.changed.emit()
            return True
        return self._start(self.settings, len(self.generation.steps), fresh=True, policy=policy)

    # -- what the panel calls ---------------------------------------------------------------
    def run(self, settings: GenerateSettings, steps: int) -> bool:
        """Generate ``steps`` tokens after ``settings.prompt`` afresh, on the worker. False
        (nothing done) while a job runs or without a model."""
        return self._start(settings, steps, fresh=True, policy=self.policy)

    def step(self, settings: GenerateSettings) -> bool:
        """One more token: after the shown generation when it was made with ``settings`` and
        the current policy, else the first token of a new one. False as :meth:`run`."""
        same = self._steppers and settings == self.settings
        return self._start(settings, 1, fresh=not same, policy=self.policy)

    def cancel(self) -> None:
        """Stop the running job after the step it is in (what it made is kept)."""
        self.worker.cancel.set()

    def forget(self) -> None:
        """Drop the generation (another model was loaded); a running job's answer is ignored."""
        self.cancel()
        self._request += 1
        self._close_steppers()
        self.generation = self.reference = self.settings = None
        self.selected_step = -1
        if self._busy:
            self._set_busy(False)
        self.changed.emit()

    def release(self) -> None:
        """Let go of the steppers and the weights they hold (the window was closed); the shown
        generation stays, and the next Step starts a new one. A running job is stopped and its
        steppers are let go when it answers."""
        if self._busy:
            self.cancel()
            self._release_when_done = True
        self._close_steppers()

    # -- the job ----------------------------------------------------------------------------
    def _start(self, settings: GenerateSettings, steps: int, fresh: bool, policy) -> bool:
        loaded = self.loaded
        if self._busy or loaded is None:
            return False
        self._request += 1
        request, old = self._request, self._steppers

        def work(progress, cancelled) -> _Done:
            if fresh:
                made = [
                    Stepper(loaded, settings.prompt, cache_policy=policy, **settings.arguments())
                ]
                if policy is not None:
                    made.append(Stepper(loaded, settings.prompt, **settings.arguments()))
                steppers = tuple(made)
            else:
                steppers = old
            taken, stopped = 0, ""
            for i in range(steps):
                if i and cancelled():
                    break
                try:
                    for stepper in steppers:
                        stepper.step()
                except GenerationError as exc:
                    if not taken and fresh:
                        raise
                    stopped = str(exc)  # keep what was made, say why it ends here
                    break
                taken += 1
                progress(taken, steps)
            results = [s.result() for s in steppers]
            reference = results[1] if len(results) > 1 else None
            return _Done(
                request, steppers, settings, policy, results[0], reference, steps, taken, stopped
            )

        self._set_busy(True)
        self.worker.run(work)
        return True

    def _done(self, done: _Done) -> None:
        if done.request != self._request:
            if done.steppers is not self._steppers:
                for stepper in done.steppers:  # another model was loaded meanwhile
                    stepper.close()
            return
        if done.steppers is not self._steppers:
            self._close_steppers()
        self._steppers, self.settings, self.policy = done.steppers, done.settings, done.policy
        self.generation, self.reference = done.generation, done.reference
        self.selected_step = len(done.generation.steps) - 1
        if self._release_when_done:
            self._release_when_done = False
            self._close_steppers()
        self._set_busy(False)
        if done.stopped and done.taken:
            self.failed.emit(f"Stopped after {done.taken} of {done.asked} steps: {done.stopped}")
        elif done.stopped:
            self.failed.emit(done.stopped)
        elif done.taken < done.asked:
            self.note.emit(f"Stopped after {done.taken} of {done.asked} steps.")
        self.changed.emit()

    def _failed(self, message: str) -> None:
        self._release_when_done = False
        self._set_busy(False)
        self.failed.emit(message)

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.running.emit(busy)

    def _close_steppers(self) -> None:
        for stepper in self._steppers:
            stepper.close()
        self._steppers = ()
