"""ControlsPanel: sliders and selectors for sizes, mask, scaling, normaliser and backend.

Every control writes the session through app/session/resize.py (so matrices stay
consistent) inside one undo step; drags of one slider fold into a single step.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.engine import (
    AttentionInputError,
    Backend,
    divisors,
    torch_installed,
    torch_missing_reason,
)
from attention_explorer.engine.config import OPTIONS
from attention_explorer.engine.variants.norm_weights import refit_norm_weights
from attention_explorer.session import History, Session, resize
from attention_explorer.ui.editing.controls_parts import FittingCombo, combo, off_spin, select
from attention_explorer.ui.editing.controls_sinks import SinksRow
from attention_explorer.ui.editing.token_strip import (
    MAX_TOKENS as STRIP_MAX_TOKENS,
    SLIDER_MAX_TOKENS,
)
from attention_explorer.ui.widgets.labeled_slider import SliderWithBox, float_slider, int_slider

MAX_TOKENS = SLIDER_MAX_TOKENS
MASK_LABELS = OPTIONS["mask"]
SCALE_LABELS = OPTIONS["scale"]
NORMALIZER_LABELS = OPTIONS["normalizer"]
POSITIONAL_LABELS = OPTIONS["positional"]
MODE_LABELS = OPTIONS["mode"]
POSITIONAL_TIP = "Position information: a table added to X, or RoPE turning each head's q and k"
#: Undo labels of the sliders and spin boxes: one drag of these folds into a single undo step.
#: A pick from a list (heads, mask, normaliser ...) is always a step of its own.
DRAGGED_CONTROLS = frozenset(
    {"Tokens", "d_model", "d_k", "Temperature", "Scale factor", "Padding", "Soft cap", "Window"}
    | {"Rotary fraction"}
)
QK_NORM_LABELS = OPTIONS["qk_norm"]


def position_refusal(config, positional: str) -> str | None:
    """Why the engine refuses ``positional`` for ``config`` (its own validation decides, e.g.
    direct mode has no X to add a table to), or None when it is accepted."""
    try:
        config.with_changes(positional=positional).validate()
    except AttentionInputError as exc:
        return str(exc)
    return None


def _with_qk_norm(data, kind: str):
    """``data`` with QK-norm ``kind``, its q_norm and k_norm weights made (neutral ones) or
    fitted to the sizes."""
    config = data.config.with_changes(qk_norm=kind)
    changes = refit_norm_weights(data.inputs, data.config, config)
    return data.with_changes(config=config, inputs=data.inputs.with_changes(**changes))


class ControlsPanel(QWidget):
    """The settings of the attention computation, bound to a Session.

    ``message(str)`` reports a refused change (e.g. heads that do not divide d_model); the
    session is left as it was.
    """

    message = Signal(str)

    def __init__(self, session: Session, history: History, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.history = history
        self._build()
        self._connect()
        self._sync()
        # Not ``inputs``: a typed number changes no control, and refreshing them on every cell
        # edit cost a repaint of this panel per keystroke.
        for name in ("config", "tokens", "kv_tokens", "backend", "dtype"):
            getattr(session.events, name).connect(self._sync)

    # -- layout ------------------------------------------------------------------------------
    def _build(self) -> None:
        self.mode = combo(MODE_LABELS, "Where Q, K and V come from")
        self.tokens = int_slider(
            1,
            MAX_TOKENS,
            f"Number of tokens (query rows), 1 to {MAX_TOKENS}. The + beside the token names"
            f" stops at {STRIP_MAX_TOKENS}, since typing matrices beyond that is impractical;"
            f" this slider's maximum is {MAX_TOKENS} (more when a session file holds more).",
        )
        self.d_model = int_slider(1, 512, "Embedding width d_model (projection mode)")
        self.heads = FittingCombo()
        self.heads.setToolTip("Number of heads; in projection mode only divisors of d_model")
        self.d_k = int_slider(1, 128, "Width of each head's queries and keys, d_k")
        self.d_k_derived = QLabel()  # projection mode: d_k follows d_model / heads
        self.d_k_derived.setObjectName("dkDerived")
        d_k_row = QWidget()
        d_k_layout = QHBoxLayout(d_k_row)
        d_k_layout.setContentsMargins(0, 0, 0, 0)
        d_k_layout.addWidget(self.d_k, 1)
        d_k_layout.addWidget(self.d_k_derived, 1)
        temperature = SliderWithBox(0.05, 5.0, 2, 0.05, "Divides the scaled scores before softmax")
        self.temperature, self.temperature_box = temperature.slider, temperature.box
        self.mask = combo(MASK_LABELS, "Which keys each query may look at")
        self.pad = QSpinBox()
        self.pad.setToolTip("How many keys at the end are padding")
        self.scale = combo(SCALE_LABELS, "What the scores are multiplied by")
        self.scale_factor = float_slider(0.01, 4.0, 3, "Custom scale factor")
        self.normalizer = combo(NORMALIZER_LABELS, "How a row of scores becomes weights")
        self.positional = combo(POSITIONAL_LABELS, POSITIONAL_TIP)
        self.qk_norm = combo(
            QK_NORM_LABELS,
            "QK-norm: an RMSNorm with its own weights (the q_norm and k_norm tabs) on each "
            "head's q and k before RoPE; a session file may norm all heads together instead",
        )
        self.softcap = off_spin(QDoubleSpinBox(), 1000.0, "Soft cap c: scores -> c·tanh(s/c)")
        self.softcap.setDecimals(1)
        self.window = off_spin(QSpinBox(), MAX_TOKENS, "Sliding window: keys this far back hide")
        self.sinks = SinksRow(self._apply)  # gpt-oss's learned sink logit per head
        self.rotary_fraction = QDoubleSpinBox()
        self.rotary_fraction.setRange(0.05, 1.0)
        self.rotary_fraction.setSingleStep(0.05)
        self.rotary_fraction.setToolTip("Share of each head's d_k that RoPE turns (Pythia: 0.25)")
        self.backend = FittingCombo()
        self.backend.setToolTip("Which library computes attention")
        self.dtype = combo({"float32": "float32", "float64": "float64"}, "Number precision")
        self.error = QLabel()
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setWordWrap(True)
        self.error.setObjectName("controlsError")
        self.error.setStyleSheet("color: #c0392b;")
        self.error.hide()

        sizes = QFormLayout()
        sizes.addRow("Inputs", self.mode)
        sizes.addRow("Tokens", self.tokens)
        sizes.addRow("d_model", self.d_model)
        sizes.addRow("Heads", self.heads)
        sizes.addRow("d_k", d_k_row)
        scoring = QFormLayout()
        scoring.addRow("Scale", self.scale)
        scoring.addRow("Factor", self.scale_factor)
        scoring.addRow("Temperature", temperature)
        scoring.addRow("Mask", self.mask)
        scoring.addRow("Pad tokens", self.pad)
        scoring.addRow("Normaliser", self.normalizer)
        scoring.addRow("Positions", self.positional)
        scoring.addRow("RoPE turns", self.rotary_fraction)
        scoring.addRow("QK-norm", self.qk_norm)
        scoring.addRow("Soft cap", self.softcap)  # a row each: side by side they widened
        scoring.addRow("Window", self.window)  # the dock past 1366x768's Controls width
        scoring.addRow("Sinks", self.sinks.box)
        running = QFormLayout()
        running.addRow("Backend", self.backend)
        running.addRow("Precision", self.dtype)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)  # dense: the panel fits 1366x768 unscrolled
        layout.setSpacing(4)
        for title, form in (("Sizes", sizes), ("Scores", scoring), ("Engine", running)):
            form.setContentsMargins(6, 4, 6, 4)
            form.setVerticalSpacing(3)
            form.setHorizontalSpacing(6)
            box = QGroupBox(title)
            box.setLayout(form)
            layout.addWidget(box)
        layout.addWidget(self.error)
        layout.addStretch(1)
        self._devices_listed = False  # cuda/mps devices are looked up once torch is chosen
        self._fill_backends(
            [Backend("numpy", "cpu")] + ([Backend("torch", "cpu")] if torch_installed() else [])
        )

    def _fill_backends(self, backends: list[Backend]) -> None:
        with QSignalBlocker(self.backend):
            self.backend.clear()
            for backend in backends:
                self.backend.addItem(backend.label, backend)
            if not torch_installed():
                self.backend.addItem("torch (not installed)", None)
                item = self.backend.model().item(self.backend.count() - 1)
                item.setEnabled(False)
                item.setToolTip(torch_missing_reason().capitalize())

    def _connect(self) -> None:
        self.mode.currentIndexChanged.connect(lambda: self._apply("Inputs mode", self._set_mode))
        self.tokens.valueChanged.connect(lambda v: self._apply("Tokens", resize.set_token_count, v))
        self.d_model.valueChanged.connect(lambda v: self._apply("d_model", resize.set_d_model, v))
        self.heads.currentIndexChanged.connect(self._on_heads_changed)
        self.d_k.valueChanged.connect(lambda v: self._apply("d_k", resize.set_head_dim, v))
        self.temperature.valueChanged.connect(
            lambda v: self._set_config("Temperature", temperature=round(float(v), 2))
        )
        self.scale_factor.valueChanged.connect(
            lambda v: self._set_config("Scale factor", scale_factor=float(v))
        )
        self.scale.currentIndexChanged.connect(
            lambda: self._set_config("Scale", scale=self.scale.currentData())
        )
        self.normalizer.currentIndexChanged.connect(
            lambda: self._set_config("Normaliser", normalizer=self.normalizer.currentData())
        )
        self.positional.currentIndexChanged.connect(
            lambda: self._set_config("Positions", positional=self.positional.currentData())
        )
        self.mask.currentIndexChanged.connect(self._on_mask_changed)
        self.qk_norm.currentIndexChanged.connect(
            lambda: self._apply("QK-norm", _with_qk_norm, self.qk_norm.currentData())
        )
        self.softcap.valueChanged.connect(
            lambda v: self._set_config("Soft cap", softcap=float(v) if v > 0 else None)
        )
        self.window.valueChanged.connect(
            lambda v: self._set_config("Window", window=int(v) if v > 0 else None)
        )
        self.rotary_fraction.valueChanged.connect(
            lambda v: self._set_config("Rotary fraction", rotary_fraction=round(float(v), 4))
        )
        self.pad.valueChanged.connect(lambda v: self._apply("Padding", resize.set_padding, v))
        self.backend.currentIndexChanged.connect(self._on_backend_changed)
        self.dtype.currentIndexChanged.connect(self._on_dtype_changed)

    # -- writing the session ---------------------------------------------------------------
    def _apply(self, label: str, change, *args) -> None:
        """Run a SessionData -> SessionData change as one undo step; report refusals.

        Consecutive changes of one slider (a drag) share a step; list picks never merge.
        """
        try:
            new = change(self.session.data(), *args)
            new.config.validate()
        except AttentionInputError as exc:
            self._show_error(str(exc))
            self._sync()
            return
        self._show_error("")
        merge = f"control:{label}" if label in DRAGGED_CONTROLS else None
        with self.history.transaction(label, merge=merge):
            self.session.update(
                tokens=new.tokens, kv_tokens=new.kv_tokens, config=new.config, inputs=new.inputs
            )

    def _set_config(self, label: str, **changes) -> None:
        self._apply(
            label, lambda data: data.with_changes(config=data.config.with_changes(**changes))
        )

    def _set_mode(self, data):
        return resize.set_mode(data, self.mode.currentData())

    def _on_heads_changed(self) -> None:
        heads = self.heads.currentData()
        if heads is not None:
            self._apply("Heads", resize.set_heads, int(heads))

    def _on_mask_changed(self) -> None:
        kind = self.mask.currentData()
        if kind == "padding":
            self._apply("Mask", resize.set_padding, max(1, self.pad.value()))
        elif kind == "custom":
            from attention_explorer.engine.mask import allowed_mask

            def to_custom(data):
                n, m = len(data.tokens), len(data.key_tokens)
                allowed = allowed_mask(data.config, n, m)
                custom = tuple(tuple(bool(x) for x in row) for row in allowed)
                return data.with_changes(
                    config=data.config.with_changes(mask="custom", custom_mask=custom)
                )

            self._apply("Mask", to_custom)
        else:
            self._set_config("Mask", mask=kind)

    def _on_backend_changed(self) -> None:
        backend = self.backend.currentData()
        if backend is None:
            return
        if backend.name == "torch" and not self._devices_listed:
            self._discover_devices()
        with self.history.transaction("Backend"):
            self.session.backend = backend

    def _discover_devices(self) -> None:
        """List cuda/mps devices once torch is wanted (importing torch takes a moment)."""
        from attention_explorer.engine import available_backends

        self._devices_listed = True
        current = self.backend.currentData()
        self._fill_backends(available_backends())
        with QSignalBlocker(self.backend):  # the same choice again: no second change
            select(self.backend, current)

    def _on_dtype_changed(self) -> None:
        with self.history.transaction("Precision"):
            self.session.dtype = self.dtype.currentData()

    def _offer_positions(self, c) -> None:
        """Grey out the position encodings the engine refuses for ``c`` (in direct mode all
        but RoPE and none), each with the reason as its tooltip; the box works in both modes.
        A config that fails validation by itself tells nothing: every option stays on."""
        known = position_refusal(c, c.positional) is None
        model = self.positional.model()
        for index in range(self.positional.count()):
            refusal = position_refusal(c, self.positional.itemData(index)) if known else None
            item = model.item(index)
            item.setEnabled(refusal is None)
            item.setToolTip(refusal or "")

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))
        if text:
            self.message.emit(text)

    # -- reading the session ---------------------------------------------------------------
    def _sync(self, *_args) -> None:
        """Show the session's values without writing back."""
        s = self.session
        c = s.config
        widgets = (
            self.mode,
            self.tokens,
            self.d_model,
            self.heads,
            self.d_k,
            self.temperature,
            self.temperature_box,
            self.mask,
            self.pad,
            self.scale,
            self.scale_factor,
            self.normalizer,
            self.positional,
            self.qk_norm,
            self.softcap,
            self.window,
            self.rotary_fraction,
            self.backend,
            self.dtype,
        )
        blockers = [QSignalBlocker(w) for w in widgets]
        select(self.mode, c.mode)
        # A session opened from a file may hold more tokens than the slider reaches (up to the
        # engine's limit): the slider then reaches it too, so it shows the true count.
        self.tokens.setMaximum(max(MAX_TOKENS, len(s.tokens)))
        self.tokens.setValue(len(s.tokens))
        self.d_model.setValue(c.d_model)
        self.d_model.setEnabled(c.mode == "projection")
        options = divisors(c.d_model) if c.mode == "projection" else list(range(1, 17))
        if c.heads not in options:
            options = sorted({*options, c.heads})
        if [self.heads.itemData(k) for k in range(self.heads.count())] != options:
            self.heads.clear()
            for h in options:
                self.heads.addItem(str(h), h)
        select(self.heads, c.heads)
        self.d_k.setValue(c.head_dim)
        derived = c.mode == "projection"
        self.d_k.setVisible(not derived)
        self.d_k_derived.setVisible(derived)
        self.d_k_derived.setText(f"{c.head_dim}  (= d_model / heads)")  # narrow: fits the dock
        self.d_k_derived.setToolTip(
            f"In projection mode d_k = d_model / heads = {c.d_model} / {c.heads}; "
            "change d_model or Heads to change it"
        )
        self.temperature.setValue(c.temperature)
        self.temperature_box.setValue(c.temperature)
        select(self.mask, c.mask)
        self.pad.setRange(0, len(s.key_tokens))
        self.pad.setValue(len(c.padded_keys))
        self.pad.setEnabled(c.mask == "padding")
        select(self.scale, c.scale)
        self.scale_factor.setValue(c.scale_factor)
        self.scale_factor.setEnabled(c.scale == "custom")
        select(self.normalizer, c.normalizer)
        self._offer_positions(c)
        select(self.positional, c.positional)
        select(self.qk_norm, c.qk_norm)
        self.softcap.setValue(c.softcap or 0.0)
        self.window.setValue(c.window or 0)
        self.sinks.sync(c)
        self.rotary_fraction.setValue(c.rotary_fraction)
        self.rotary_fraction.setEnabled(c.rotary)
        select(self.backend, s.backend)
        select(self.dtype, s.dtype)
        del blockers
