"""The cache policy the learner chooses: Full, Window W, Sinks S + Window W, or Evict the
positions picked on the maps; Apply asks for a rerun with it (the ``apply_requested`` signal
carries the policy dict, None for the full cache)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QRadioButton, QSpinBox, QWidget

from attention_explorer.ui.widgets.layout_parts import button, plain_label, row

KINDS = ("full", "window", "sinks", "evict")
TITLES = {
    "full": "Full cache",
    "window": "Window",
    "sinks": "Sinks + window",
    "evict": "Evict picked",
}
TIPS = {
    "full": "Every query reads every earlier position.",
    "window": "Each query reads only its own and the W − 1 positions before it.",
    "sinks": "Keep the first S positions (attention sinks, StreamingLLM) and the last W.",
    "evict": "Click positions on the maps to pick them; they are dropped from the cache once "
    "their own token has been through the model.",
}


class PolicyControls(QWidget):
    """The radio buttons, S and W, the picked positions and Apply."""

    apply_requested = Signal(object)
    kind_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.group = QButtonGroup(self)
        self.radios: dict[str, QRadioButton] = {}
        for kind in KINDS:
            radio = QRadioButton(TITLES[kind])
            radio.setToolTip(TIPS[kind])
            self.group.addButton(radio)
            self.radios[kind] = radio
        self.radios["full"].setChecked(True)
        self.sinks = QSpinBox()
        self.sinks.setRange(0, 4096)
        self.sinks.setValue(1)
        self.sinks.setPrefix("S = ")
        self.window = QSpinBox()
        self.window.setRange(1, 100_000)
        self.window.setValue(4)
        self.window.setPrefix("W = ")
        self.picked: set[int] = set()
        self.picked_label = plain_label()
        self.clear_button = button("Clear picks", tip="Forget the picked positions")
        self.apply_button = button("Apply", tip="Run the generation again with this policy")
        self.clear_button.clicked.connect(self.clear_picks)
        self.apply_button.clicked.connect(lambda: self.apply_requested.emit(self.policy()))
        self.group.buttonToggled.connect(self._on_toggled)
        layout = row(
            plain_label("Cache policy:"),
            *self.radios.values(),
            self.sinks,
            self.window,
            (self.picked_label, 1),
            self.clear_button,
            self.apply_button,
        )
        layout.setContentsMargins(0, 0, 0, 0)
        self.setLayout(layout)
        self._on_toggled()

    def kind(self) -> str:
        """The chosen kind (one of :data:`KINDS`)."""
        return next(k for k, r in self.radios.items() if r.isChecked())

    def policy(self) -> dict | None:
        """The chosen policy as ``ae.generate`` takes it (None: the full cache)."""
        kind = self.kind()
        if kind == "window":
            return {"window": self.window.value()}
        if kind == "sinks":
            return {"sinks": self.sinks.value(), "window": self.window.value()}
        if kind == "evict":
            return {"evict": sorted(self.picked)} if self.picked else None
        return None

    def show_policy(self, policy: dict | None) -> None:
        """Set the controls to ``policy`` (the one the generation shown was made with)."""
        policy = policy or {}
        if "window" in policy:
            self.window.setValue(int(policy["window"]))
            self.sinks.setValue(int(policy.get("sinks", 0)) or self.sinks.value())
            kind = "sinks" if policy.get("sinks") else "window"
        elif policy.get("evict"):
            self.picked = set(int(p) for p in policy["evict"])
            kind = "evict"
        else:
            kind = "full"
        self.radios[kind].setChecked(True)
        self._on_toggled()

    def toggle_pick(self, position: int) -> None:
        """Pick ``position`` for eviction, or unpick it (only while Evict is chosen)."""
        if self.kind() != "evict":
            return
        self.picked ^= {int(position)}
        self._on_toggled()

    def clear_picks(self) -> None:
        """Forget every picked position."""
        self.picked = set()
        self._on_toggled()

    def _on_toggled(self, *_args) -> None:
        kind = self.kind()
        self.sinks.setEnabled(kind == "sinks")
        self.window.setEnabled(kind in ("window", "sinks"))
        evicting = kind == "evict"
        self.clear_button.setEnabled(evicting and bool(self.picked))
        if evicting:
            picked = ", ".join(map(str, sorted(self.picked))) or "none yet: click the maps"
            self.picked_label.setText(f"Picked: {picked}")
        else:
            self.picked_label.setText("")
        self.kind_changed.emit(kind)
