"""WalkthroughPanel: Back / Next through every stage of the live trace, with its numbers."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.session.evented_session import Session
from attention_explorer.ui.state.live_trace import LiveTrace
from attention_explorer.ui.state.session_links import connect_until_destroyed
from attention_explorer.walkthrough import WalkStep
from attention_explorer.walkthrough.follow import Followed, session_steps

#: The narration shows at least this many lines of text; longer steps scroll.
NARRATION_LINES = 6
#: Paragraphs are set this close (pixels), so that the lines above are lines of text.
PARAGRAPH_GAP = 4
_NEXT_KEYS = (Qt.Key.Key_PageDown, Qt.Key.Key_Right)
_BACK_KEYS = (Qt.Key.Key_PageUp, Qt.Key.Key_Left)
_WAITING = "<p>The walkthrough starts as soon as the numbers can be computed.</p>"


class Narration(QTextBrowser):
    """The narration: a text browser that never shows a line cut through the middle at its
    bottom edge. A line only partly in sight is covered (in the background colour) until a
    scroll brings it in whole; the scroll bar says there is more."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.cover = QWidget(self.viewport())
        self.cover.setObjectName("narrationCover")
        self.cover.setBackgroundRole(QPalette.ColorRole.Base)
        self.cover.setAutoFillBackground(True)
        self.cover.hide()
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.cover_cut_line)
        self.verticalScrollBar().valueChanged.connect(self._cover_soon)
        self.document().documentLayout().documentSizeChanged.connect(self._cover_soon)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API name
        """Cover the cut line anew for the new height."""
        super().resizeEvent(event)
        self._cover_soon()

    def _cover_soon(self, *_args) -> None:
        self._timer.start()  # once the layout has settled (no arguments: not an interval)

    def cut_line_top(self) -> int | None:
        """The top (viewport pixels) of the line cut by the bottom edge, None when the
        bottom edge falls between lines."""
        height = self.viewport().height()
        for x in (self.document().documentMargin() + 1, self.viewport().width() // 2):
            cursor = self.cursorForPosition(QPoint(int(x), height - 1))
            line = self.cursorRect(cursor)
            if 0 < line.top() < height <= line.bottom():
                return line.top()
        return None

    def cover_cut_line(self) -> None:
        """Hide the line the bottom edge cuts through (or show every line when none is)."""
        top = self.cut_line_top()
        if top is None:
            self.cover.hide()
            return
        self.cover.setGeometry(0, top, self.viewport().width(), self.viewport().height() - top)
        self.cover.show()
        self.cover.raise_()


class WalkthroughPanel(QWidget):
    """Step through the attention pipeline of the current session, one stage at a time.

    The steps come from :func:`attention_explorer.walkthrough.steps_for` on
    ``live_trace.trace`` and are rebuilt after every recompute, keeping the current step, so
    an edit shows up in the narration at once. Moving to a step emits ``step_changed(step)``
    (a :class:`WalkStep`, or None when there is nothing to show) and points
    ``session.selected_head``/``selected_cell`` at the step's head and its selection (the
    followed query and key), so every view frames the same query row and key.
    The narration scrolls: a long step (a softmax table) is never cut off.
    Keys while the panel has focus: PageDown / Alt+Right next, PageUp / Alt+Left back,
    Home restart.
    """

    step_changed = Signal(object)

    def __init__(self, session: Session, live_trace: LiveTrace, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.live_trace = live_trace
        self._steps: list[WalkStep] = []
        self._index = 0
        self._follow = Followed(head=session.selected_head)  # the head and query followed
        self._written_cell: tuple[int, int] | None = None
        self._written_head: int | None = None
        self._stale_trace = None
        self._narration_html: str | None = None  # what the narration shows now
        self._build()
        live_trace.updated.connect(self._on_trace_updated)
        live_trace.failed.connect(self._on_trace_failed)
        links = [
            (session.events.selected_head, self._on_head_chosen),
            (session.events.selected_cell, self._on_cell_chosen),
        ]
        connect_until_destroyed(self, links)
        self.restart()

    # -- layout ------------------------------------------------------------------------------
    def _build(self) -> None:
        self.setObjectName("walkthroughPanel")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)  # "About this example: <name>"
        self.title.setObjectName("walkthroughTitle")
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.title.setFont(font)
        self.title.setWordWrap(True)
        self.counter = QLabel()
        self.counter.setObjectName("walkthroughCounter")
        self.restart_button = QPushButton("Restart")
        self.restart_button.setToolTip("Back to the first step (Home)")
        self.back_button = QPushButton("◀ Back")
        self.back_button.setToolTip("Previous step (PageUp or Alt+Left)")
        self.next_button = QPushButton("Next ▶")
        self.next_button.setToolTip("Next step (PageDown or Alt+Right)")
        for button in (self.restart_button, self.back_button, self.next_button):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.restart_button.clicked.connect(self.restart)
        self.back_button.clicked.connect(self.go_back)
        self.next_button.clicked.connect(self.go_next)
        self.narration = Narration()
        self.narration.setObjectName("walkthroughNarration")
        self.narration.setOpenLinks(False)
        self.narration.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.narration.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.narration.document().setDefaultStyleSheet(
            f"p {{ margin-top: 0px; margin-bottom: {PARAGRAPH_GAP}px; }}"
        )
        self.narration.setMinimumHeight(self.narration_height())
        self.notice = QLabel()
        self.notice.setObjectName("walkthroughNotice")
        self.notice.setWordWrap(True)
        self.notice.setTextFormat(Qt.TextFormat.PlainText)  # messages quote names and values
        self.notice.setStyleSheet("color: #b35c00;")
        self.notice.hide()

        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.counter, 0, Qt.AlignmentFlag.AlignTop)
        buttons = QHBoxLayout()
        buttons.addWidget(self.restart_button)
        buttons.addStretch(1)
        buttons.addWidget(self.back_button)
        buttons.addWidget(self.next_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(header)
        layout.addWidget(self.notice)
        self.body = QHBoxLayout()  # the narration, and beside it a view a step may show
        self.body.addWidget(self.narration, 3)
        layout.addLayout(self.body, 1)
        layout.addLayout(buttons)

    # -- public API --------------------------------------------------------------------------
    def narration_height(self) -> int:
        """The least height of the narration: NARRATION_LINES lines of text, each perhaps a
        paragraph of its own, with the document's margins and the frame."""
        line = self.narration.fontMetrics().lineSpacing() + PARAGRAPH_GAP
        margins = 2 * (self.narration.document().documentMargin() + self.narration.frameWidth())
        return round(NARRATION_LINES * line + margins) + 2

    def add_side_view(self, widget: QWidget) -> None:
        """Put ``widget`` beside the narration (the q · k pair view); hidden until shown."""
        widget.hide()
        self.body.addWidget(widget, 2)

    def steps(self) -> list[WalkStep]:
        """The current steps, built from the latest trace."""
        return list(self._steps)

    def current(self) -> WalkStep | None:
        """The step on screen, or None when there is no trace yet."""
        return self._steps[self._index] if self._steps else None

    def show_step_again(self) -> None:
        """Announce the current step again (``step_changed``), so the window frames its
        operands anew after its layout changed (presenter mode in or out)."""
        self.step_changed.emit(self.current())

    def index(self) -> int:
        """Position of the current step (0-based)."""
        return self._index

    def go_next(self) -> None:
        """Move one step on (does nothing at the last step)."""
        if self._index + 1 < len(self._steps):
            self._index += 1
            self._show(navigated=True)

    def go_back(self) -> None:
        """Move one step back (does nothing at the first step)."""
        if self._index > 0:
            self._index -= 1
            self._show(navigated=True)

    def restart(self) -> None:
        """Start again at step 1, still following the head and query the learner chose (a
        cell selected in a view counts as a choice), scrolled to the top of the narration."""
        cell, head = self.session.selected_cell, self.session.selected_head
        follow = self._follow
        if cell is not None and cell != self._written_cell:
            follow = follow.with_query(cell[0], self._tokens(), cell[1])
        if follow.by != "you":
            follow = Followed(head=follow.head, tokens=self._tokens())
            # A trace computed before the restart may belong to the previous document: the
            # first new one picks the focus afresh.
            self._stale_trace = self.live_trace.trace
        if head != self._written_head:
            follow = replace(follow, head=head)
        self._follow = follow
        self._index = 0
        self._rebuild()
        self._show(navigated=True)
        self.narration.verticalScrollBar().setValue(0)

    def new_document(self) -> None:
        """A new document replaced the old one: forget the old choices, start at step 1."""
        self._follow = Followed(head=self.session.selected_head)
        self._written_cell = None
        self.restart()

    def follow_token(self, row: int) -> None:
        """Follow query ``row`` from now on ("follow this token"), keeping the step and head;
        the key becomes the one that query attends to most."""
        trace = self.live_trace.trace
        if trace is None or not 0 <= row < trace.n_queries:
            return
        self._follow = self._follow.with_query(row, self._tokens())
        self._stale_trace = None
        self._refresh()

    def followed(self) -> Followed:
        """The head and query followed now, and who chose them."""
        return self._follow

    # -- building ----------------------------------------------------------------------------
    def _tokens(self) -> tuple[str, ...]:
        trace = self.live_trace.trace
        return tuple(trace.tokens) if trace is not None else tuple(self.session.tokens)

    def _rebuild(self) -> None:
        trace = self.live_trace.trace
        if trace is None:
            self._steps = []
            return
        self._steps, self._follow = session_steps(trace, self.session, self._follow)
        self._index = min(self._index, max(0, len(self._steps) - 1))

    def _on_head_chosen(self, head, *_old) -> None:
        """The learner chose another head (anywhere): follow it from this step on."""
        if head == self._written_head or head == self._follow.head:
            return
        self._follow = self._follow.with_head(head)
        if not self._trace_holds(head):
            return  # a long sequence computes that head now: its trace rebuilds the steps
        self._refresh()

    def _trace_holds(self, head: int) -> bool:
        """True when the live trace has ``head`` (a long sequence's pass holds only the
        selected head; until the pass for a newly chosen head arrives, it does not)."""
        trace = self.live_trace.trace
        return trace is None or head in trace.heads

    def _on_cell_chosen(self, cell, *_old) -> None:
        """The learner selected a cell (query row, key column) in a view: follow it."""
        if cell is None or tuple(cell) == self._written_cell:
            return
        trace = self.live_trace.trace
        if trace is None or not (0 <= cell[0] < trace.n_queries and 0 <= cell[1] < trace.n_keys):
            return
        self._follow = self._follow.with_query(cell[0], self._tokens(), cell[1])
        self._written_cell = tuple(cell)  # the views already show it
        self._stale_trace = None
        self._refresh()

    def _refresh(self) -> None:
        """Rebuild the steps for the followed head and query, staying on the same step."""
        before = self.current()
        self._rebuild()
        after = self.current()
        self._show(navigated=False, emit=before != after)
        if after is not None and before != after:
            self._select(after, navigated=True)

    def _on_trace_updated(self, trace) -> None:
        if self._stale_trace is not None and trace is not self._stale_trace:
            head, chosen = self._follow.head, self._follow.head_chosen
            self._follow, self._stale_trace = Followed(head=head, head_chosen=chosen), None
        before = self.current()
        self._rebuild()
        self.notice.hide()
        after = self.current()
        moved = (
            before is None
            or after is None
            or (
                (before.key, before.stage, before.head, before.cells, before.selection)
                != (after.key, after.stage, after.head, after.cells, after.selection)
            )
        )
        self._show(navigated=False, emit=moved)

    def _on_trace_failed(self, field: str, message: str) -> None:
        self.notice.setText(
            f"These numbers cannot be computed yet ({field}: {message})."
            " The walkthrough still shows the last numbers that worked."
        )
        self.notice.show()

    # -- showing -----------------------------------------------------------------------------
    def _show(self, navigated: bool, emit: bool = True) -> None:
        step = self.current()
        total = len(self._steps)
        self.back_button.setEnabled(self._index > 0)
        self.next_button.setEnabled(self._index + 1 < total)
        self.restart_button.setEnabled(total > 0 and self._index > 0)
        if step is None:
            self.title.setText("Walkthrough")
            self.counter.setText("")
            self._set_narration(_WAITING, navigated=True)
        else:
            self.title.setText(step.title)
            self.counter.setText(f"Step {self._index + 1} of {total}")
            self._set_narration(step.text, navigated)
            if navigated or emit:
                self._select(step, navigated)
        if emit:
            self.step_changed.emit(step)

    def _set_narration(self, html: str, navigated: bool) -> None:
        """Show ``html`` unless it is already shown (a new document is laid out and repainted
        again); after a mere recompute the reader keeps their scroll position."""
        if html == self._narration_html:
            if navigated:  # as a new document would: from the top
                self.narration.verticalScrollBar().setValue(0)
            return
        self._narration_html = html
        scroll = self.narration.verticalScrollBar().value()
        self.narration.setHtml(html)
        if not navigated:
            self.narration.verticalScrollBar().setValue(scroll)

    def _select(self, step: WalkStep, navigated: bool) -> None:
        """Point the views at the step's head and cell, without undoing the user's own choice."""
        s = self.session
        if not navigated and (
            self._written_cell is None
            or s.selected_cell != self._written_cell
            or s.selected_head not in (self._written_head, step.head)
        ):
            return  # after a mere recompute, only follow up on a selection we made ourselves
        # A selected head the trace lacks is being computed: the steps, built on the trace
        # without it, show another head; writing that head back would undo the choice.
        if step.head != s.selected_head and self._trace_holds(s.selected_head):
            self._written_head = step.head
            s.selected_head = step.head
        cell = step.selection or (step.cells[0] if step.cells else None)
        if cell is not None and cell != s.selected_cell:
            self._written_cell = cell
            s.selected_cell = cell

    # -- keyboard ----------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API name
        """PageDown / Alt+Right: next; PageUp / Alt+Left: back; Home: restart."""
        key, mods = event.key(), event.modifiers()
        alt = bool(mods & Qt.KeyboardModifier.AltModifier)
        arrows = (Qt.Key.Key_Left, Qt.Key.Key_Right)
        if key in _NEXT_KEYS and (alt or key not in arrows):
            self.go_next()
        elif key in _BACK_KEYS and (alt or key not in arrows):
            self.go_back()
        elif key == Qt.Key.Key_Home:
            self.restart()
        else:
            super().keyPressEvent(event)
            return
        event.accept()
