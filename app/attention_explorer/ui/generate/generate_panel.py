"""The Generate panel: a prompt, the sampling settings (temperature, top-k, top-p, seed),
Step and Run N, and what the model wrote: one row per generated token (the token chosen,
its probability, the model's rank of it) and the selected step's ten most probable next
tokens. It drives a :class:`~.generate_state.GenerateState` (the steps run on its worker,
with progress and Cancel) and redraws from it; the settings are remembered
(:class:`~.generate_prefs.GeneratePreferences`). Token text is always plain text.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QWidget,
)

from attention_explorer.generation.decode import MOST_STEPS, Vocabulary
from attention_explorer.generation.step import refusal
from attention_explorer.ui.generate.generate_prefs import (
    MOST_SEED,
    MOST_TEMPERATURE,
    GeneratePreferences,
)
from attention_explorer.ui.generate.generate_state import GenerateSettings, GenerateState
from attention_explorer.ui.generate.generate_tables import StepsTable, TopTable, shown
from attention_explorer.ui.widgets import layout_parts as parts
from attention_explorer.ui.widgets.plain_text import error_text_style

GREEDY_TIP = (
    "Temperature 0 is greedy: the most probable token every step. Top-k, top-p and the seed "
    "apply when sampling (temperature above 0)."
)


def _spin(low: int, high: int, value: int, special: str = "", tip: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    if special:
        box.setSpecialValueText(special)
    box.setToolTip(tip)
    return box


def _real(high: float, step: float, value: float, special: str, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.0, high)
    box.setDecimals(2)
    box.setSingleStep(step)
    box.setValue(value)
    box.setSpecialValueText(special)
    box.setToolTip(tip)
    return box


class GeneratePanel(QWidget):
    """The panel over ``state`` with its choices kept in ``settings``; ``show_model`` is asked
    for when there is no model and the user wants to load one. ``tabs`` holds the tables'
    tab; the window adds the cache view beside it."""

    load_requested = Signal()

    def __init__(
        self,
        state: GenerateState,
        settings: QSettings,
        offer: Callable[[], str] | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.state, self.settings = state, settings
        self.offer = offer or (lambda: "")
        prefs = GeneratePreferences.load(settings)
        self.model_note = parts.plain_label()
        self.load_button = parts.button(
            "Show the Model panel", tip="Load a model there; it is the one generated with"
        )
        self.prompt_edit = QLineEdit()
        self.prompt_edit.setPlaceholderText("The text the model continues")
        self.steps_spin = _spin(1, MOST_STEPS, prefs.steps, tip="How many tokens Run makes")
        self.temperature_spin = _real(
            MOST_TEMPERATURE, 0.1, prefs.temperature, "0 (greedy)", GREEDY_TIP
        )
        self.top_k_spin = _spin(
            0, 1_000_000, prefs.top_k, "off", "Draw only from the k most probable tokens"
        )
        self.top_p_spin = _real(
            1.0, 0.05, prefs.top_p, "off", "Draw only from the most probable tokens that reach p"
        )
        self.seed_spin = _spin(0, MOST_SEED, prefs.seed, tip="The same seed draws the same tokens")
        self.step_button = parts.button("Step", tip="Generate one more token")
        self.run_button = parts.button("Run")
        self.cancel_button = parts.button("Cancel", enabled=False, tip="Stop after this step")
        self.progress = parts.progress_bar()
        self.hint = parts.plain_label()
        self.message = parts.plain_label()
        self.text_line = parts.plain_label()
        self.steps_table = StepsTable()
        self.top_title = parts.plain_label()
        self.top_table = TopTable()
        self._build()
        self._connect()
        self._model_changed()
        self._show()
        self._say("", error=False)

    # -- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        settings_row = parts.row(
            parts.form(("Steps", self.steps_spin)),
            parts.form(("Temperature", self.temperature_spin)),
            parts.form(("Top-k", self.top_k_spin)),
            parts.form(("Top-p", self.top_p_spin)),
            parts.form(("Seed", self.seed_spin)),
            parts.STRETCH,
        )
        buttons = parts.row(
            self.step_button, self.run_button, self.cancel_button, (self.progress, 1), parts.STRETCH
        )
        top = QWidget()
        parts.column(top, self.top_title, (self.top_table, 1)).setContentsMargins(0, 0, 0, 0)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.steps_table)
        splitter.addWidget(top)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        self.tabs = QTabWidget()
        self.tabs.addTab(splitter, "Tokens")
        parts.column(
            self,
            parts.row((self.model_note, 1), self.load_button),
            parts.form(("Prompt", self.prompt_edit)),
            settings_row,
            buttons,
            self.hint,
            self.message,
            self.text_line,
            (self.tabs, 1),
        )

    def _connect(self) -> None:
        state = self.state
        self.load_button.clicked.connect(self.load_requested)
        self.step_button.clicked.connect(self.step)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(state.cancel)
        self.steps_table.itemSelectionChanged.connect(self._row_chosen)
        state.changed.connect(self._show)
        state.running.connect(self._running)
        state.progress.connect(self._progress)
        state.failed.connect(lambda text: self._say(text, error=True))
        state.note.connect(lambda text: self._say(text, error=False))
        events = getattr(state.model_state, "events", None)
        if events is not None:
            events.loaded.connect(lambda *_: self._model_changed())
        self.prompt_edit.textChanged.connect(self._settings_edited)
        for box in (self.temperature_spin, self.top_k_spin, self.top_p_spin, self.seed_spin):
            box.valueChanged.connect(self._settings_edited)
        self.steps_spin.valueChanged.connect(self._settings_edited)

    # -- what the user asks -----------------------------------------------------------------
    def current_settings(self) -> GenerateSettings:
        """The settings the boxes hold now."""
        backend = getattr(getattr(self.state.model_state, "session", None), "backend", "numpy")
        return GenerateSettings(
            prompt=self.prompt_edit.text(),
            temperature=self.temperature_spin.value(),
            top_k=self.top_k_spin.value() or None,
            top_p=self.top_p_spin.value() or None,
            seed=self.seed_spin.value(),
            backend=backend if isinstance(backend, str) else backend.spec,
        )

    def step(self) -> None:
        """One more token (from the prompt afresh when it or a setting changed)."""
        self._start(lambda s: self.state.step(s))

    def run(self) -> None:
        """Steps-box tokens from the prompt, afresh."""
        self._start(lambda s: self.state.run(s, self.steps_spin.value()))

    def _start(self, call: Callable[[GenerateSettings], bool]) -> None:
        if self.state.loaded is None:
            self._say("No model is loaded: load one in the Model panel first.", error=True)
            return
        self.remember()
        self._say("", error=False)
        call(self.current_settings())

    def remember(self) -> None:
        """Save the boxes' choices for the next run and session."""
        GeneratePreferences(
            self.steps_spin.value(),
            self.temperature_spin.value(),
            self.top_k_spin.value(),
            self.top_p_spin.value(),
            self.seed_spin.value(),
        ).save(self.settings)

    def _row_chosen(self) -> None:
        rows = self.steps_table.selectionModel().selectedRows()
        if rows:
            self.state.select_step(rows[0].row())

    # -- following the state ----------------------------------------------------------------
    def _model_changed(self) -> None:
        loaded = self.state.loaded
        self.load_button.setVisible(loaded is None)
        if loaded is None:
            name = self.offer()
            self.load_button.setText(f"Load {name}" if name else "Show the Model panel")
            self.model_note.setText(
                f"No model is loaded. Load {name} (the open session's model) to generate with "
                "it, or choose another in the Model panel."
                if name
                else "No model is loaded. Load one in the Model panel (a decoder such as "
                "tiny-induction or GPT-2), then Step or Run here."
            )
        elif refusal(loaded.weights):
            self.model_note.setText(
                f"{refusal(loaded.weights)}: load a decoder (tiny-induction, GPT-2, a Llama…) "
                "in the Model panel to generate."
            )
        else:
            w = loaded.weights
            self.model_note.setText(
                f"{loaded.name}: {w.n_layers} layers × {w.heads} heads, its own weights (the "
                "open layer's edits and knockouts are not applied here)."
            )
            if not self.prompt_edit.text().strip():
                self.prompt_edit.setText(self.state.model_state.text or "")
        self._enable()

    def _settings_edited(self) -> None:
        n = self.steps_spin.value()
        self.run_button.setText(f"Run {n} step{'s' if n != 1 else ''}")
        self.run_button.setToolTip(f"Generate {n} tokens after the prompt, from the start")
        greedy = self.temperature_spin.value() == 0
        for box in (self.top_k_spin, self.top_p_spin, self.seed_spin):
            box.setEnabled(not greedy)
        shown_with = self.state.settings
        if self.state.generation is not None and shown_with != self.current_settings():
            self.hint.setText("The prompt or a setting changed: Step starts again from the prompt.")
        else:
            self.hint.setText("")
        self.hint.setVisible(bool(self.hint.text()))

    def _enable(self) -> None:
        loaded = self.state.loaded
        busy, ready = self.state.busy(), loaded is not None and not refusal(loaded.weights)
        self.step_button.setEnabled(ready and not busy)
        self.run_button.setEnabled(ready and not busy)
        self.cancel_button.setEnabled(busy)

    def _running(self, busy: bool) -> None:
        self._enable()
        self.progress.setVisible(busy)
        if busy:
            self.progress.setRange(0, 0)

    def _progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.progress.setFormat(f"step {done} of {total}")

    def _say(self, text: str, error: bool) -> None:
        self.message.setStyleSheet(error_text_style(self) if error else "")
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def refresh(self) -> None:
        """Say again which model there is (or which one Load would open)."""
        self._model_changed()

    def _show(self) -> None:
        generation, state = self.state.generation, self.state
        self.steps_table.show_generation(generation, state.selected_step)
        self._settings_edited()
        self.text_line.setVisible(generation is not None)
        if generation is None:
            self.text_line.setText("")
            self.top_title.setText("Step or Run: each step's most probable next tokens show here.")
            self.top_table.show_step(None, str, False)
            return
        made = " · ".join(shown(t) for t in generation.tokens[generation.prompt_length :])
        self.text_line.setText(f"Generated after the prompt: {made}")
        step = state.step_shown()
        sampled = state.settings is not None and state.settings.temperature > 0
        if step is not None:
            query = shown(generation.tokens[step.position])
            self.top_title.setText(
                f"Step {state.selected_step}: the 10 most probable tokens after "
                f"“{query}” (position {step.position})"
            )
        text_of = str if state.loaded is None else Vocabulary(state.loaded).token_text
        self.top_table.show_step(step, text_of, sampled)
