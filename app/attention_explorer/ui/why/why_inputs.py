"""The prompts every Why? view reads: the clean and the corrupted text (each box says how many
tokens it holds as it is typed), and the answer and wrong tokens, offered from the model's top
predictions after each prompt (computed on a worker thread) and free to type.

The clean prompt starts as the Model panel's text (model mode's state); a new model loaded
there resets it. Patching and "attention beside cause" read all four; the logit lens reads
the clean prompt; head attribution reads the clean prompt with the answer as its target and
the wrong token as its distractor.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QComboBox, QLineEdit, QWidget

from attention_explorer.pretrained.run_model import WINDOW_THREADS
from attention_explorer.ui.widgets import layout_parts as parts
from attention_explorer.ui.widgets.job_worker import JobWorker
from attention_explorer.ui.widgets.plain_text import error_text_style

#: How many of the top predictions the answer and wrong boxes offer.
OFFERED = 10


def top_predictions(loaded, text: str) -> list[tuple[str, int, float]]:
    """The model's :data:`OFFERED` most probable next tokens after ``text``: (token as the
    strip shows it, id, probability). A ModelError for a model without an output head."""
    from attention_explorer.pretrained import model_run

    run = model_run(loaded, text, threads=WINDOW_THREADS)
    return run.top_tokens(None, OFFERED)


def _token_box(tip: str) -> QComboBox:
    box = QComboBox()
    box.setEditable(True)
    box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    box.setMinimumContentsLength(10)
    box.setToolTip(tip)
    return box


def chosen_token(box: QComboBox) -> int | str:
    """The token of an answer or wrong box: the id of the offered token picked (a token such
    as a lone byte is shown escaped, which only its id names), or the text typed."""
    text = box.currentText()
    index = box.findText(text)
    if index >= 0 and box.itemData(index) is not None:
        return int(box.itemData(index))
    return text.strip()


class WhyInputs(QWidget):
    """The clean and corrupted prompts and the answer and wrong tokens, over model mode's
    ``state``. ``changed`` after any edit; ``predictions_ready`` once the boxes are filled."""

    changed = Signal()
    predictions_ready = Signal()

    def __init__(self, state, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        self.clean_edit = QLineEdit()
        self.clean_edit.setPlaceholderText("the clean prompt: the model gets the answer right")
        self.corrupted_edit = QLineEdit()
        self.corrupted_edit.setPlaceholderText(
            "the corrupted prompt: as many tokens, changed where the answer comes from"
        )
        self.clean_count = parts.plain_label()
        self.corrupted_count = parts.plain_label()
        self.answer_box = _token_box("the token the clean prompt should predict")
        self.wrong_box = _token_box("the token the corrupted prompt predicts instead")
        self.note = parts.plain_label()
        self.predictor = JobWorker("prediction", self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(300)
        form = parts.form(
            ("Clean", parts.row((self.clean_edit, 1), self.clean_count)),
            ("Corrupted", parts.row((self.corrupted_edit, 1), self.corrupted_count)),
            (
                "Answer",
                parts.row(
                    self.answer_box, parts.plain_label("  Wrong"), self.wrong_box, parts.STRETCH
                ),
            ),
        )
        layout = parts.column(self, form, self.note)
        layout.setContentsMargins(0, 0, 0, 0)
        for edit in (self.clean_edit, self.corrupted_edit):
            edit.textChanged.connect(lambda *_: self._on_text())
        for box in (self.answer_box, self.wrong_box):
            box.currentTextChanged.connect(lambda *_: self.changed.emit())
        self._timer.timeout.connect(self.predict)
        self.predictor.finished.connect(self._on_predictions)
        self.predictor.failed.connect(self._on_failed)
        state.events.loaded.connect(lambda *_: self.follow_model())
        self.follow_model()

    # -- reading ----------------------------------------------------------------------------
    @property
    def clean(self) -> str:
        """The clean prompt."""
        return self.clean_edit.text()

    @property
    def corrupted(self) -> str:
        """The corrupted prompt."""
        return self.corrupted_edit.text()

    @property
    def answer(self) -> int | str:
        """The answer token: its id, or the token as typed (as the token strip shows it)."""
        return chosen_token(self.answer_box)

    @property
    def wrong(self) -> int | str:
        """The wrong token: its id, or as typed."""
        return chosen_token(self.wrong_box)

    def token_count(self, text: str) -> int | None:
        """How many tokens ``text`` is for the loaded model (None: no model, or refused)."""
        loaded = self.state.loaded
        if loaded is None or not text.strip():
            return None
        try:
            return len(loaded.tokenize(text).ids)
        except Exception:  # a too-long text, say: the job will say why in one line
            return None

    def lengths_problem(self) -> str:
        """Why the two prompts cannot be patched position by position ('' when they can)."""
        a, b = self.token_count(self.clean), self.token_count(self.corrupted)
        if a is None or b is None or a == b:
            return ""
        return (
            f"the clean prompt has {a} tokens and the corrupted prompt {b}; "
            "patching needs as many in both"
        )

    # -- following --------------------------------------------------------------------------
    def follow_model(self) -> None:
        """Start from the Model panel's model and text."""
        self.clean_edit.setText(self.state.text or "")
        self._on_text()

    def _on_text(self) -> None:
        a, b = self.token_count(self.clean), self.token_count(self.corrupted)
        self.clean_count.setText("" if a is None else f"{a} tokens")
        self.corrupted_count.setText("" if b is None else f"{b} tokens")
        unequal = a is not None and b is not None and a != b
        self.corrupted_count.setStyleSheet(error_text_style(self) if unequal else "")
        self.corrupted_count.setToolTip(
            "patching needs as many tokens as the clean prompt" if unequal else ""
        )
        self._timer.start()
        self.changed.emit()

    def predict(self) -> None:
        """Offer the top predictions after both prompts (on a worker thread)."""
        loaded, clean, corrupted = self.state.loaded, self.clean, self.corrupted
        if loaded is None or not clean.strip():
            return

        def work(progress, cancelled):
            after = top_predictions(loaded, corrupted) if corrupted.strip() else []
            return clean, corrupted, top_predictions(loaded, clean), after

        self.predictor.run(work)

    def _on_predictions(self, result) -> None:
        clean, corrupted, top_clean, top_corrupted = result
        if (clean, corrupted) != (self.clean, self.corrupted):
            return  # typed on since: a newer prediction is on its way
        answer = top_clean[0][1]
        wrong = next((i for _t, i, _p in top_corrupted if i != answer), None)
        if wrong is None:
            wrong = next((i for _t, i, _p in top_clean if i != answer), answer)
        self._fill(self.answer_box, top_clean, answer)
        self._fill(self.wrong_box, top_corrupted or top_clean, wrong)
        self.note.setText("")
        self.predictions_ready.emit()

    def _fill(self, box: QComboBox, offered: list[tuple[str, int, float]], default: int) -> None:
        typed = box.currentText().strip()
        keep = typed and box.findText(typed) < 0  # a token the learner typed stays
        box.blockSignals(True)
        box.clear()
        for token, tid, p in offered:
            box.addItem(f"{token}   {p:.3f}", tid)
        box.blockSignals(False)
        if keep:
            box.setEditText(typed)
        else:
            box.setCurrentIndex(max(box.findData(default), 0))
        self.changed.emit()

    def _on_failed(self, message: str) -> None:
        self.note.setText(message[:1].upper() + message[1:])
