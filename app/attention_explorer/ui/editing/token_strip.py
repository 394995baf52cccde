"""TokenStrip: the token names as a row of small text boxes, with add and remove buttons.

Typing renames a token (on Enter or leaving the box); + and − change the count through
:mod:`attention_explorer.session.resize`, so every matrix keeps matching the tokens. In
cross-attention a second row holds the key/value tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from superqt import QFlowLayout

from attention_explorer.engine import AttentionInputError
from attention_explorer.session.evented_session import Session
from attention_explorer.session.history import History
from attention_explorer.session.resize import set_key_token_count, set_token_count
from attention_explorer.ui.state.session_links import connect_until_destroyed, disconnect_all
from attention_explorer.ui.widgets.plain_text import error_text_style

MIN_TOKENS = 1
#: The most tokens the + button adds up to, and the most name boxes shown: beyond that,
#: typing matrices by hand is impractical (the Tokens slider in Controls goes further).
MAX_TOKENS = 64
#: The Tokens slider's maximum (kept equal to the controls panel's).
SLIDER_MAX_TOKENS = 4096
MAX_NAME_LENGTH = 32
#: Lines of name boxes shown before the strip scrolls (they wrap at the strip's width).
MAX_NAME_LINES = 4
#: Why + stops where it does, for its tooltip and the message of a refused count.
LIMIT_TEXT = (
    f"+ stops at {MAX_TOKENS} tokens: beyond that, typing matrices by hand is impractical. "
    f"The Tokens slider in Controls goes up to {SLIDER_MAX_TOKENS}."
)


@dataclass
class _Row:
    """The widgets of one sequence: its title, its name boxes and its buttons."""

    keys: bool
    title: QLabel
    boxes_layout: QFlowLayout
    scroll: QScrollArea
    remove: QToolButton
    add: QToolButton
    more: QLabel
    edits: list[QLineEdit] = field(default_factory=list)


class TokenStrip(QWidget):
    """Editable token names: rename by typing, + and − to change how many there are.

    A click on a query token's box emits ``token_chosen(index)``: follow this token.
    """

    token_chosen = Signal(int)

    def __init__(self, session: Session, history: History, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.history = history
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(4)
        grid.setVerticalSpacing(2)
        self.query_row = self._make_row(grid, 0, keys=False)
        self.key_row = self._make_row(grid, 1, keys=True)
        self.message_label = QLabel(self)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)  # messages may quote names
        self.message_label.setWordWrap(True)
        self.message_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addLayout(grid)
        layout.addWidget(self.message_label)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._sync()
        self._connections = [
            (session.events.tokens, self._on_tokens_changed),
            (session.events.kv_tokens, self._on_tokens_changed),
            (session.events.config, self._on_tokens_changed),
        ]
        connect_until_destroyed(self, self._connections)

    def detach(self) -> None:
        """Stop following the session (call before the strip is thrown away)."""
        disconnect_all(self._connections)

    # -- building ------------------------------------------------------------------------
    def _make_row(self, grid: QGridLayout, line: int, keys: bool) -> _Row:
        title = QLabel("Keys" if keys else "Tokens", self)
        title.setToolTip(
            "Key/value tokens (cross-attention)" if keys else "Query tokens; type to rename"
        )
        holder = QWidget()
        boxes = QFlowLayout(holder)  # the names wrap onto more lines instead of being cut off
        boxes.setContentsMargins(0, 0, 0, 0)
        boxes.setHorizontalSpacing(3)
        boxes.setVerticalSpacing(2)
        more = QLabel(holder)  # "… 4032 more": names past the boxes shown
        more.setObjectName("moreTokens")
        more.setTextFormat(Qt.TextFormat.PlainText)
        boxes.addWidget(more)
        scroll = QScrollArea(self)
        scroll.setWidget(holder)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        what = "key token" if keys else "token"
        remove = self._button("−", f"Remove the last {what}")
        add = self._button("+", f"Add a {what} at the end. {LIMIT_TEXT}")
        remove.clicked.connect(lambda: self.set_count(self._count(keys) - 1, keys=keys))
        add.clicked.connect(lambda: self.set_count(self._count(keys) + 1, keys=keys))
        for column, widget in enumerate((title, remove, add)):
            grid.addWidget(widget, 2 * line, column)
        grid.addWidget(scroll, 2 * line + 1, 0, 1, 4)  # the names get the strip's whole width
        scroll.viewport().installEventFilter(self)  # wrap again when the names' room changes
        grid.setColumnStretch(3, 1)
        return _Row(keys, title, boxes, scroll, remove, add, more)

    def _button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        return button

    def _new_edit(self, row: _Row, index: int) -> QLineEdit:
        edit = QLineEdit(row.scroll.widget())
        edit.setMaxLength(MAX_NAME_LENGTH)
        edit.setAlignment(Qt.AlignmentFlag.AlignCenter)
        tip = "Token {}: type to rename; a click follows it in the walkthrough"
        tip = "Key token {}: type to rename" if row.keys else tip
        edit.setToolTip(tip.format(index))
        edit.editingFinished.connect(lambda: self._on_edit_finished(row, index))
        if not row.keys:  # a click also means "follow this token" (the walkthrough)
            edit.setProperty("tokenIndex", index)
            edit.installEventFilter(self)
        edit.textChanged.connect(lambda _text: self._fit_width(edit))
        return edit

    @staticmethod
    def _fit_width(edit: QLineEdit) -> None:
        text_width = edit.fontMetrics().horizontalAdvance(edit.text() or "M")
        edit.setFixedWidth(max(40, min(160, text_width + 18)))

    # -- public --------------------------------------------------------------------------
    def edits(self, keys: bool = False) -> list[QLineEdit]:
        """The name boxes of the tokens (or of the key tokens), in order."""
        return list((self.key_row if keys else self.query_row).edits)

    def message(self) -> str:
        """The message shown under the strip ('' when none)."""
        return self.message_label.text() if self.message_label.isVisibleTo(self) else ""

    def rename(self, index: int, name: str, keys: bool = False) -> bool:
        """Rename token ``index`` (or key token); an empty name is refused with a message."""
        names = self._names(keys)
        if not 0 <= index < len(names):
            return False
        name = name.strip()
        what = "Key token" if keys else "Token"
        if not name:
            self._show_error(f"{what} {index}: a name cannot be empty; it stays {names[index]!r}")
            self._sync()
            return False
        self._clear_message()
        if name == names[index]:
            return True
        new = names[:index] + (name,) + names[index + 1 :]
        with self.history.transaction(f"Rename {what.lower()} {index} to {name!r}"):
            if keys:
                self.session.kv_tokens = new
            else:
                self.session.tokens = new
        return True

    def set_count(self, count: int, keys: bool = False) -> bool:
        """Grow or shrink the tokens (or key tokens) to ``count``; every matrix follows."""
        what = "key tokens" if keys else "tokens"
        if not MIN_TOKENS <= count <= MAX_TOKENS:
            self._show_error(
                f"There can be {MIN_TOKENS} to {MAX_TOKENS} {what} here, not {count}. " + LIMIT_TEXT
            )
            return False
        old = self._count(keys)
        if count == old:
            return True
        change = set_key_token_count if keys else set_token_count
        try:
            new = change(self.session.data(), count)
        except AttentionInputError as error:
            self._show_error(str(error))
            return False
        self._clear_message()
        label = (
            f"{'Add' if count > old else 'Remove'} {what[:-1] if abs(count - old) == 1 else what}"
        )
        with self.history.transaction(label):
            self.session.update(
                inputs=new.inputs, config=new.config, tokens=new.tokens, kv_tokens=new.kv_tokens
            )
        return True

    # -- helpers -------------------------------------------------------------------------
    def _names(self, keys: bool) -> tuple[str, ...]:
        return self.session.kv_tokens if keys else self.session.tokens

    def _count(self, keys: bool) -> int:
        return len(self._names(keys))

    def _show_error(self, message: str) -> None:
        self.message_label.setStyleSheet(error_text_style(self))
        self.message_label.setText(message)
        self.message_label.show()

    def _clear_message(self) -> None:
        self.message_label.clear()
        self.message_label.hide()

    def _on_edit_finished(self, row: _Row, index: int) -> None:
        if index < len(row.edits):
            self.rename(index, row.edits[index].text(), keys=row.keys)

    # -- model -> view -------------------------------------------------------------------
    def _on_tokens_changed(self, *_args: object) -> None:
        self._sync()

    def _sync(self) -> None:
        cross = self.session.config.attention == "cross"
        for row in (self.query_row, self.key_row):
            visible = cross or not row.keys
            for widget in (row.title, row.scroll, row.remove, row.add):
                widget.setVisible(visible)
            names = self._names(row.keys) if visible else ()
            self._sync_row(row, names[:MAX_TOKENS])
            extra = len(names) - MAX_TOKENS
            row.more.setText(f"… {extra} more" if extra > 0 else "")
            row.more.setVisible(extra > 0)
            row.title.setText(f"{'Keys' if row.keys else 'Tokens'} ({len(names)})")
            row.remove.setEnabled(MIN_TOKENS < len(names) <= MAX_TOKENS)
            row.add.setEnabled(len(names) < MAX_TOKENS)
        self._fit_heights()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Wrap the names again for the new width (the strip's height follows)."""
        super().resizeEvent(event)
        self._fit_heights()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API name
        """A mouse press on a query token's box emits ``token_chosen`` with its index (the
        walkthrough follows it); a names area that changed width wraps its names again."""
        index = watched.property("tokenIndex")
        if event.type() == QEvent.Type.MouseButtonPress and isinstance(index, int):
            self.token_chosen.emit(index)
        elif event.type() == QEvent.Type.Resize:
            self._fit_heights()
        return super().eventFilter(watched, event)

    def _fit_heights(self) -> None:
        """As many lines as the names need, up to :data:`MAX_NAME_LINES` (then it scrolls)."""
        line = QLineEdit().sizeHint().height()
        for row in (self.query_row, self.key_row):
            width = max(1, row.scroll.viewport().width())
            needed = row.boxes_layout.heightForWidth(width)
            most = MAX_NAME_LINES * line + (MAX_NAME_LINES - 1) * 2
            row.scroll.setFixedHeight(max(line, min(needed, most)))

    def _sync_row(self, row: _Row, names: tuple[str, ...]) -> None:
        while len(row.edits) > len(names):
            edit = row.edits.pop()
            edit.blockSignals(True)
            row.boxes_layout.removeWidget(edit)
            # Out of sight and out of the Tab order now: deleteLater waits for the event loop
            # that called it, which (inside a dialog's or a menu's loop) can be much later.
            edit.hide()
            edit.deleteLater()
        while len(row.edits) < len(names):
            edit = self._new_edit(row, len(row.edits))
            row.boxes_layout.removeWidget(row.more)  # "… N more" stays after the names
            row.boxes_layout.addWidget(edit)
            row.boxes_layout.addWidget(row.more)
            row.edits.append(edit)
        for edit, name in zip(row.edits, names):
            if edit.text() != name:
                with QSignalBlocker(edit):
                    edit.setText(name)
            self._fit_width(edit)
