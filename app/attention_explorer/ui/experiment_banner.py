"""ExperimentBanner: an example's question, what to look for, and a "Try it" button."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from attention_explorer.session import Session


class ExperimentBanner(QFrame):
    """Shown above the views while the session has a description, notes or an experiment.

    ``try_requested(dict)`` carries the config changes of the experiment's "try" entry.
    """

    try_requested = Signal(dict)

    def __init__(self, session: Session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.setObjectName("experimentBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(self.text.textFormat().RichText)
        self.try_button = QPushButton("Try it")
        self.try_button.setToolTip("Apply this experiment's change (undo with Ctrl+Z)")
        self.try_button.clicked.connect(self._on_try)
        self.close_button = QPushButton("Hide")
        self.close_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.try_button)
        layout.addWidget(self.close_button)
        for name in ("description", "notes", "experiment", "name"):
            getattr(session.events, name).connect(self.refresh)
        self.refresh()

    def refresh(self, *_args) -> None:
        """Rebuild the text from the session; hide when there is nothing to say."""
        s = self.session
        parts = []
        if s.description:
            parts.append(f"<b>{_escape(s.name)}</b> — {_escape(s.description)}")
        question = s.experiment.get("question")
        if question:
            parts.append(f"<b>Question:</b> {_escape(question)}")
        expect = s.experiment.get("expect")
        if expect:
            parts.append(f"<b>Look for:</b> {_escape(expect)}")
        for title, note in s.notes:
            parts.append(f"<b>{_escape(title)}</b> {_escape(note)}" if title else _escape(note))
        self.text.setText("<br>".join(parts))
        self.try_button.setVisible(bool(s.experiment.get("try")))
        self.setVisible(bool(parts))

    def _on_try(self) -> None:
        changes = self.session.experiment.get("try")
        if isinstance(changes, dict):
            self.try_requested.emit(dict(changes))


def _escape(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
