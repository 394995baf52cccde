"""ModelPanel: a real model's attention in the window — the model, the text, a layer picker,
the layers x heads overview, and the way back to the model's own numbers.

Clicking a map asks the window (``open_requested``) to open that layer as the explorer's
session (every stage, editable) with that head selected. Once the numbers are edited the
panel says "Edited from layer L of MODEL" and "Back to the model's numbers" restores them (one
undo step). The panel follows the open session: a model session (opened from a file, say)
fills in its model, text and layer.

What the panel loads and opens goes into model mode's state (``context.model``, a
:class:`~attention_explorer.ui.state.model_state.ModelState`), which the Output panel, the
live run, knockouts, the sweep and any later panel of model mode read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QWidget,
)

from attention_explorer.pretrained.checkpoint.safe_paths import is_dir
from attention_explorer.session import SessionData
from attention_explorer.ui.model.model_loader import ModelLoader
from attention_explorer.ui.model.model_overview import ModelOverview
from attention_explorer.ui.state.panel_context import PanelContext
from attention_explorer.ui.widgets import layout_parts as parts

if TYPE_CHECKING:
    from attention_explorer.pretrained import LoadedModel

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_TEXT = "The cat sat on the mat because it was tired."
#: What the overview shows once a model layer is open: the edited run, the model's own, or
#: their difference.
SHOW_CHOICES = ("Edited", "Original", "Difference")


class ModelPanel(QWidget):
    """The Model dock, over the session, history and preferences of ``context`` (as the
    matrix panel).

    Signals: ``open_requested(session_data, head)`` when the learner opens a layer (the window
    replaces its document, then calls :meth:`opened`); ``status(text, msecs)`` for the status
    bar. The window calls :meth:`document_replaced` whenever another document opens.
    """

    open_requested = Signal(object, int)
    status = Signal(str, int)

    def __init__(self, context: PanelContext, parent: QWidget | None = None):
        super().__init__(parent)
        self.context = context
        self.session, self.history, self.prefs = context.session, context.history, context.prefs
        self.state = context.model
        self.loader = ModelLoader(self)
        self._pending_text = ""
        self._wanted_layer = 0  # the open model session's layer, framed after a Load
        self._adopting = False  # building the model's numbers of an open saved session
        self._token_buttons: list[QPushButton] = []
        self._build()
        self._connect()

    @property
    def loaded(self) -> LoadedModel | None:
        """The model of the overview (the state's)."""
        return self.state.loaded

    @property
    def text(self) -> str:
        """The text the overview was computed on (the state's)."""
        return self.state.text

    @property
    def origin(self) -> SessionData | None:
        """The model's own numbers of the open layer (the state's ``origin_data``)."""
        return self.state.origin_data

    # -- building ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.model_edit = QLineEdit(DEFAULT_MODEL)
        self.model_edit.setPlaceholderText("a model folder, or a hub id such as all-MiniLM-L6-v2")
        self.browse_button = parts.button("Browse…")
        self.text_edit = QLineEdit(DEFAULT_TEXT)
        self.load_button = parts.button("Load")
        self.load_button.setDefault(True)
        self.progress = parts.progress_bar()
        self.message = parts.plain_label()
        self.layer_spin = QSpinBox()
        self.layer_spin.setRange(0, 0)
        self.layer_spin.setEnabled(False)
        self.open_button = parts.button(
            "Open this layer",
            enabled=False,
            tip="Open the picked layer in the explorer (or click a map)",
        )
        self.show_box = QComboBox()
        self.show_box.addItems(SHOW_CHOICES)
        self.show_box.setToolTip(
            "After an edit: the edited model's attention, the model's own, or their difference"
        )
        self.tokens_row = QWidget()
        self.tokens_layout = QHBoxLayout(self.tokens_row)
        self.tokens_layout.setContentsMargins(0, 0, 0, 0)
        self.tokens_layout.setSpacing(2)
        tokens_scroll = QScrollArea()
        tokens_scroll.setWidget(self.tokens_row)
        tokens_scroll.setWidgetResizable(True)
        tokens_scroll.setFixedHeight(44)
        self.overview = ModelOverview(self.prefs.colormap)
        self.origin_label = parts.plain_label()
        self.back_button = parts.button("Back to the model's numbers")
        self.back_button.setVisible(False)
        show = (QLabel("Show"), self.show_box)
        parts.column(
            self,
            parts.form(
                ("Model", parts.row((self.model_edit, 1), self.browse_button)),
                ("Text", parts.row((self.text_edit, 1), self.load_button)),
                ("Layer", parts.row(self.layer_spin, self.open_button, parts.STRETCH, *show)),
            ),
            self.progress,
            self.message,
            tokens_scroll,
            (self.overview, 1),
            parts.row((self.origin_label, 1), self.back_button),
        )

    def _connect(self) -> None:
        self.browse_button.clicked.connect(lambda: self.choose_folder())
        self.load_button.clicked.connect(lambda: self.load())
        self.text_edit.returnPressed.connect(lambda: self.load())
        self.model_edit.returnPressed.connect(lambda: self.load())
        self.layer_spin.valueChanged.connect(self.overview.set_layer)
        self.open_button.clicked.connect(
            lambda: self.open_head(self.layer_spin.value(), self.session.selected_head)
        )
        self.overview.head_clicked.connect(self.open_head)
        self.overview.row_hovered.connect(self._on_row_hovered)
        self.back_button.clicked.connect(lambda: self.restore())
        self.loader.progress.connect(self._on_progress)
        self.loader.busy.connect(self._on_busy)
        self.loader.failed.connect(self._on_failed)
        self.loader.overview_ready.connect(self._on_overview)
        self.loader.layer_ready.connect(self._on_layer)
        self.history.changed.connect(self._update_origin)
        self.state.events.origin.connect(self._update_origin)
        self.prefs.events.colormap.connect(self.overview.set_colormap)

    # -- actions ----------------------------------------------------------------------------
    def choose_folder(self) -> bool:
        """Ask for a model folder, then load it."""
        folder = QFileDialog.getExistingDirectory(
            self, "Open a model folder (config.json, model.safetensors, tokenizer.json)"
        )
        if not folder:
            return False
        self.model_edit.setText(folder)
        self.load()
        return True

    def open_or_choose(self) -> bool:
        """File > Open Model…: load the model named in the panel (the open model session's,
        or the one typed), or ask for a folder when no model is named."""
        if not self.model_edit.text().strip():
            return self.choose_folder()
        if not self.is_loaded():
            self.load()
        self.text_edit.setFocus()
        return True

    def is_loaded(self) -> bool:
        """True when the overview shows the model and text named in the panel."""
        return (
            self.loaded is not None
            and self.text == self.text_edit.text()
            and self.model_edit.text().strip() in (self.loaded.name, str(self.loaded.folder))
        )

    def load(self) -> None:
        """Read the model and compute every layer on the text, off the UI thread."""
        self.message.setText("")
        self._pending_text = self.text_edit.text()  # the overview's text, even if edited meanwhile
        self.loader.load_overview(self.model_edit.text(), self._pending_text)

    def open_head(self, layer: int, head: int) -> None:
        """Open ``layer`` as the explorer's session with ``head`` selected."""
        if self.loaded is None:
            return
        self.layer_spin.setValue(layer)
        self.loader.load_layer(self.loaded, self.text, layer, head)

    def restore(self) -> None:
        """Put the model's numbers back (one undo step)."""
        if self.origin is None:
            return
        data = self.origin
        with self.history.transaction("Back to the model's numbers"):
            self.session.update(tokens=data.tokens, config=data.config, inputs=data.inputs)
        self.status.emit("The model's own numbers are back", 8000)

    def is_edited(self) -> bool:
        """True when the open session's numbers differ from the model's."""
        return self.state.is_edited()

    # -- reactions --------------------------------------------------------------------------
    def _on_progress(self, message: str, done: int, total: int) -> None:
        self.progress.setRange(0, total)  # 0..0: a busy bar while the total is unknown
        self.progress.setValue(done)
        self.progress.setFormat(message)
        self.message.setText(message)

    def _on_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.load_button.setEnabled(not busy)

    def _on_failed(self, message: str) -> None:
        self.message.setText(message)
        self.status.emit(message, 15000)

    def _on_overview(self, loaded, weights, tokens) -> None:
        self.state.set_loaded(loaded, self._pending_text)
        self.overview.set_colormap(self.prefs.colormap)
        self.overview.set_weights(weights, tokens)
        layers, heads, n = weights.shape[:3]
        self.layer_spin.setRange(0, layers - 1)
        self.layer_spin.setEnabled(True)
        self.layer_spin.setValue(min(self._wanted_layer, layers - 1))
        self.open_button.setEnabled(True)
        self._set_tokens(tokens)
        self._adopt_open_session()
        self.message.setText(
            f"{loaded.name}: {layers} layers x {heads} heads, {n} tokens. "
            "Click a map to open that head; hover a token to follow it."
        )

    def _on_layer(self, data: SessionData, head: int) -> None:
        if self._adopting:  # the model's numbers of the saved session that is open
            self._adopting = False
            self.state.set_origin(data)
            return
        self.open_requested.emit(data, head)

    def opened(self, data: SessionData, head: int) -> None:
        """The window opened ``data`` (a layer this panel built): its numbers are the model's."""
        self.session.selected_head = head
        self.state.set_origin(data)
        self.message.setText(f"Opened {data.name}, head {head}: every stage is editable.")

    def document_replaced(self) -> None:
        """Another document is open: its numbers are not (known to be) the model's. A model
        session names its model, text and layer: the panel takes them up, so Load (or
        File > Open Model…) shows that text."""
        self.state.set_origin(None)
        record = self.state.record()
        if record is None:
            return
        folder, name = record.folder, record.name
        model = folder if folder and is_dir(Path(folder)) else name  # a stat that never raises
        same = self.loaded is not None and str(self.loaded.folder) == folder
        if model and not same:  # keep "all-MiniLM-L6-v2" as typed, not its folder
            self.model_edit.setText(model)
        if record.text is not None:
            self.text_edit.setText(record.text)
        if record.layer is not None:
            self._wanted_layer = record.layer  # framed once the overview is loaded
            self.layer_spin.setValue(record.layer)

    def _adopt_open_session(self) -> None:
        """After a Load: when the open session is this model's layer on this text (a saved
        model session), rebuild the model's numbers of that layer, so edits are marked and
        the model run follows them."""
        record = self.state.record()
        if self.origin is not None or record is None or record.text != self.text:
            return
        names = (self.loaded.name, str(self.loaded.folder))
        if record.name not in names and record.folder not in names:
            return
        layer = record.layer
        if layer is not None and 0 <= layer < self.loaded.weights.n_layers:
            self._adopting = True
            self.loader.load_layer(self.loaded, self.text, layer, self.session.selected_head)

    def _update_origin(self, *_args) -> None:
        origin = self.state.origin
        if origin is None:
            self.origin_label.setText("")
            self.back_button.setVisible(False)
            return
        where = f"layer {origin.layer} of {origin.name}"
        edited = self.is_edited()
        self.origin_label.setText(f"Edited from {where}" if edited else f"The numbers of {where}")
        self.back_button.setVisible(edited)

    def _set_tokens(self, tokens) -> None:
        while self.tokens_layout.count():  # the old buttons and the old stretch
            item = self.tokens_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self._token_buttons = []
        for row, token in enumerate(tokens):
            button = QPushButton(token.replace("&", "&&"))  # plain text; "&" is no shortcut
            button.setFlat(True)
            button.setStyleSheet("padding: 1px 4px")
            button.setToolTip("Hover: this token's attention in every head of the layer")
            button.setProperty("token_row", row)
            button.installEventFilter(self)
            self.tokens_layout.addWidget(button)
            self._token_buttons.append(button)
        self.tokens_layout.addStretch(1)

    def token_button(self, row: int) -> QPushButton:
        """The button of token ``row`` (hovering it highlights that row in every head)."""
        return self._token_buttons[row]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        """Hovering a token button highlights its attention row across the layer's heads."""
        row = watched.property("token_row") if isinstance(watched, QPushButton) else None
        if row is not None:
            if event.type() == QEvent.Type.Enter:
                self.overview.highlight_row(int(row))
            elif event.type() == QEvent.Type.Leave:
                self.overview.highlight_row(None)
        return super().eventFilter(watched, event)

    def _on_row_hovered(self, layer: int, row: int) -> None:
        for k, button in enumerate(self._token_buttons):
            button.setFlat(k != row)
