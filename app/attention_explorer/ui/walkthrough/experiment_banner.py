"""ExperimentBanner: an example's question, what to look for, "Try it", and before / after.

The banner follows the state: before the experiment it asks the question and offers "Try it";
once the session holds the tried settings it says what was changed and shows, for the
followed query row, each stage the change affected before, after and their difference (read
from the trace kept at the click and the live trace, never recomputed here). Undoing the
change brings the question back. Every name and number is escaped: a token called
``<img src=x>`` reads literally.

The example's description and notes are the walkthrough's About step; the banner never repeats
them (issue 31): its title line names the example, its Details hold only what the About does
not say (the question, what to look for, what was tried and the engine's refusal).
"""

from __future__ import annotations

import html
import re

import numpy as np
from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stages import CATALOGUE, title as stage_title
from attention_explorer.session import Session
from attention_explorer.ui.state.live_trace import LiveTrace

#: Stages compared after "Try it", in pipeline order (those the change leaves equal are left
#: out): the catalogue's ``compared`` stages.
COMPARED_STAGES = tuple(name for name, entry in CATALOGUE.items() if entry.compared)
#: Numbers shown per row in the comparison.
COMPARED_VALUES = 8
#: The banner's text takes at most this share of the window's height (then it scrolls), so a
#: long question or a before / after table of many stages leaves the views room.
MAX_HEIGHT_SHARE = 0.2
#: ... but always room for this many lines.
MIN_LINES = 3
#: The button that opens the text under the title line, and closes it.
MORE_TEXT, LESS_TEXT = "Details ▾", "Less ▴"


def _escape(text: object) -> str:
    return html.escape(str(text))


def _row(values: np.ndarray) -> str:
    shown = [format_number(v, display=True) for v in values[:COMPARED_VALUES]]
    more = f", … {len(values) - COMPARED_VALUES} more" if len(values) > COMPARED_VALUES else ""
    return f"[{', '.join(shown)}{more}]"


def _difference(after: np.ndarray, before: np.ndarray) -> str:
    """after − before, cell by cell; a cell the mask hid on one side reads "shown"/"hidden"."""
    words = []
    for new, old in zip(after[:COMPARED_VALUES], before[:COMPARED_VALUES]):
        if np.isfinite(new) and np.isfinite(old):
            words.append(format_number(new - old, display=True))
        elif new == old:
            words.append("0")
        else:
            words.append("shown" if np.isfinite(new) else "hidden")
    more = f", … {len(after) - COMPARED_VALUES} more" if len(after) > COMPARED_VALUES else ""
    return f"[{', '.join(words)}{more}]"


def _plain(markup: str) -> str:
    """``markup`` (the banner's own: lines, a table) as plain text."""
    document = re.sub(r"<br>|</tr>", "\n", markup)
    document = re.sub(r"</t[dh]>", " ", document)
    return html.unescape(re.sub(r"<[^>]+>", "", document))


class _TextScroll(QScrollArea):
    """The banner's text area: asks for ``wanted`` pixels of height (its text's)."""

    wanted = 0

    def sizeHint(self):  # noqa: N802 - Qt's name
        """The width Qt would give, the height of the text (up to the banner's cap)."""
        hint = super().sizeHint()
        return QSize(hint.width(), self.wanted or hint.height())


class ExperimentBanner(QFrame):
    """Shown above the views while the session has a description, notes or an experiment
    (its title line names the example; Details open the question and what was tried).

    ``try_requested(dict)`` carries the config changes of the experiment's "try" entry;
    ``refused(message)`` shows the engine's refusal of that change in the banner.
    """

    try_requested = Signal(dict)
    compare_requested = Signal()

    def __init__(
        self, session: Session, live: LiveTrace | None = None, parent: QWidget | None = None
    ):
        super().__init__(parent)
        self.session = session
        self.live = live
        self._before = None  # the trace on screen when "Try it" was clicked
        self._refusal = ""
        self._watched: QWidget | None = None  # the window whose height caps the banner's
        self.setObjectName("experimentBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)  # every piece is escaped below
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.scroll = _TextScroll()
        self.scroll.setWidget(self.text)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # the text wraps to whatever width the window gives: its one-line width asks for none
        self.scroll.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Maximum)
        self.try_button = QPushButton("Try it")
        self.try_button.setToolTip("Apply this experiment's change (undo with Ctrl+Z)")
        self.try_button.clicked.connect(self._on_try)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip(
            "The selected stage before and after the change, and their difference"
        )
        self.compare_button.clicked.connect(self.compare_requested.emit)
        self.close_button = QPushButton("Hide")
        self.close_button.clicked.connect(self.hide)
        # One title line; the question and what to look for open on demand (13 lines pushed
        # the views off a laptop). The description and notes are the walkthrough's About.
        self.title_line = QLabel()
        self._title_markup = ""  # the full title line, bold name (see _show_title)
        self.title_line.setObjectName("experimentTitle")
        self.title_line.setTextFormat(Qt.TextFormat.RichText)  # escaped like the text
        self.title_line.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.title_line.installEventFilter(self)  # a new width elides the title line anew
        self.more_button = QPushButton(MORE_TEXT)
        self.more_button.setCheckable(True)
        self.more_button.setToolTip("Show the example's question, what to look for, what was tried")
        self.more_button.toggled.connect(self.set_expanded)
        column = QVBoxLayout()
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.title_line)
        column.addWidget(self.scroll)
        self.scroll.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 2, 8, 2)
        layout.addLayout(column, 1)
        layout.addWidget(self.more_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.try_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.compare_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        session.events.experiment.connect(self._forget_refusal)  # before refresh runs
        for name in ("description", "notes", "experiment", "name", "config", "selected_cell"):
            getattr(session.events, name).connect(self.refresh)
        if live is not None:
            live.updated.connect(self.refresh)
        self.refresh()

    # -- state -------------------------------------------------------------------------------
    def expanded(self) -> bool:
        """True while the whole text shows under the title line."""
        return self.more_button.isChecked()

    def set_expanded(self, on: bool) -> None:
        """Open (``on``) or close the text under the title line."""
        if self.more_button.isChecked() != bool(on):
            self.more_button.setChecked(bool(on))  # comes back here through toggled
            return
        self.more_button.setText(LESS_TEXT if on else MORE_TEXT)
        self.scroll.setVisible(bool(on))
        self._fit_height()

    def tried(self) -> bool:
        """True while the session holds every setting the experiment's "try" names."""
        changes = self.session.experiment.get("try")
        if not isinstance(changes, dict) or not changes:
            return False
        config = self.session.config
        return all(getattr(config, k, object()) == v for k, v in changes.items())

    def show_refusal(self, message: str) -> None:
        """Say in the banner why the engine refused the experiment's change."""
        self._refusal = message
        self.refresh()
        self.set_expanded(True)

    def _forget_refusal(self, *_args) -> None:
        self._refusal = ""

    def plain_text(self) -> str:
        """What the banner says, without markup: the title line, then the Details (for tests
        and screen readers)."""
        return f"{_plain(self.title_line.text())}\n{self.details_text()}"

    def details_text(self) -> str:
        """What the Details say, without markup (the text under the title line)."""
        return _plain(self.text.text())

    # -- text --------------------------------------------------------------------------------
    def refresh(self, *_args) -> None:
        """Rebuild the text from the session; hide when there is nothing to say."""
        s = self.session
        tried = self.tried()
        if not tried:
            self._before = None
        # Not the description nor the notes: the walkthrough's About step says them.
        parts = []
        question = s.experiment.get("question")
        if question:
            parts.append(f"<b>Question:</b> {_escape(question)}")
        expect = s.experiment.get("expect")
        if expect:
            parts.append(f"<b>Look for:</b> {_escape(expect)}")
        if tried:
            parts.append(self._tried_text())
        if self._refusal:
            parts.append(f"<b>Engine says:</b> {_escape(self._refusal)}")
        self.text.setText("<br>".join(parts))
        self._title_markup = self._title(tried)
        self._show_title()
        self.more_button.setVisible(bool(parts))
        if not parts and self.expanded():
            self.set_expanded(False)  # nothing left to open
        self.try_button.setVisible(bool(s.experiment.get("try")))
        self.try_button.setEnabled(not tried)
        self.try_button.setText("Tried" if tried else "Try it")
        self.compare_button.setVisible(tried)
        self.setVisible(bool(parts or s.description or s.notes))  # an example: name its title
        self._fit_height()

    def _title(self, tried: bool) -> str:
        """The title line: the example's name and sizes, and what was tried or refused."""
        s = self.session
        sizes = s.config.summary(len(s.tokens))
        line = f"<b>{_escape(s.name or 'Experiment')}</b> ({_escape(sizes)})"
        if tried:
            line += " · <b>Experiment applied</b>: see Details (Ctrl+Z undoes it)"
        if self._refusal:
            line += " · <b>Engine refused the change</b>: see Details"
        return line

    def title_full_text(self) -> str:
        """The whole title line as plain text (what its tooltip holds when it is elided)."""
        return _plain(self._title_markup)

    def title_elided(self) -> bool:
        """True while the title line is too wide for the banner and ends in "…"."""
        return self.title_line.textFormat() == Qt.TextFormat.PlainText

    def _show_title(self) -> None:
        """The title line in full (bold name) when it fits; else cut at its right end with
        "…" as plain text, the whole line in the tooltip, so no word is ever clipped."""
        label, full = self.title_line, self.title_full_text()
        bold = QFont(label.font())
        bold.setBold(True)
        width = label.contentsRect().width()
        if QFontMetrics(bold).horizontalAdvance(full) <= width or width <= 0:
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setText(self._title_markup)
            label.setToolTip("")
            return
        elided = label.fontMetrics().elidedText(full, Qt.TextElideMode.ElideRight, width)
        label.setTextFormat(Qt.TextFormat.PlainText)  # names from a file never become markup
        label.setText(elided)
        # the tooltip shows the line as typed: escaped inside a paragraph, never markup
        label.setToolTip(f"<p style='white-space:pre-wrap'>{_escape(full)}</p>")

    def _fit_height(self) -> None:
        """As tall as the text, up to MAX_HEIGHT_SHARE of the window (then the text scrolls);
        a window short of room may squeeze it down to MIN_LINES lines, so opening the text
        never makes a window at its smallest grow."""
        lines = self.fontMetrics().lineSpacing()
        cap = max(MIN_LINES * lines, int(self.window().height() * MAX_HEIGHT_SHARE))
        width = self.scroll.viewport().width()
        needed = self.text.heightForWidth(width) if width > 50 else self.text.sizeHint().height()
        height = min(max(needed, lines), cap)
        least = min(height, MIN_LINES * lines)
        scroll = self.scroll
        if scroll.wanted != height or scroll.minimumHeight() != least:
            scroll.wanted = height
            scroll.setMinimumHeight(least)
            scroll.setMaximumHeight(height)
            scroll.updateGeometry()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """A new width wraps the text anew: fit the height again."""
        super().resizeEvent(event)
        self._fit_height()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Once shown, follow the window's height too (the cap is a share of it)."""
        super().showEvent(event)
        top = self.window()
        if top is not self and top is not self._watched:
            top.installEventFilter(self)
            self._watched = top
        self._fit_height()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """The window was resized: fit the height to the new cap."""
        if watched is self.title_line and event.type() == QEvent.Type.Resize:
            self._show_title()
        elif watched is self._watched and event.type() == QEvent.Type.Resize:
            self._fit_height()
        return False

    def _tried_text(self) -> str:
        changes = self.session.experiment.get("try", {})
        what = ", ".join(f"{_escape(k)} = {_escape(v)}" for k, v in changes.items())
        text = (
            f"<b>Tried:</b> {what}. Undo (Ctrl+Z) goes back. The example's notes describe the "
            "numbers before the change."
        )
        return text + self._comparison()

    def _comparison(self) -> str:
        before = self._before
        after = self.live.trace if self.live is not None else None
        if before is None or after is None or after is before:
            return ""
        head = self.session.selected_head
        cell = self.session.selected_cell
        row = cell[0] if cell is not None else 0
        rows = []
        for stage in COMPARED_STAGES:
            if not (before.has(stage) and after.has(stage)):
                continue
            if head not in before.heads or head not in after.heads:
                continue
            old, new = before.stage(stage, head), after.stage(stage, head)
            if old.shape != new.shape or row >= old.shape[0]:
                continue
            if np.array_equal(old[row], new[row]):
                continue
            rows.append(
                f"<tr><td>{_escape(stage_title(stage))}</td><td>{_row(old[row])}</td>"
                f"<td>{_row(new[row])}</td><td>{_difference(new[row], old[row])}</td></tr>"
            )
        if not rows:
            return ""
        token = _escape(after.tokens[row]) if row < len(after.tokens) else str(row)
        return (
            f"<br>Row “{token}” of head {head}, before and after:"
            "<table cellspacing='0' cellpadding='2'>"
            "<tr><th align='left'>stage</th><th>before</th><th>after</th><th>after − before</th>"
            f"</tr>{''.join(rows)}</table>"
        )

    def _on_try(self) -> None:
        changes = self.session.experiment.get("try")
        if isinstance(changes, dict):
            self._refusal = ""
            self._before = self.live.trace if self.live is not None else None
            self.set_expanded(True)  # the before / after comparison is what was asked for
            self.try_requested.emit(dict(changes))
