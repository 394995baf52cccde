"""View preferences (colour maps, scales, cell values, theme), evented and saved with QSettings."""

from __future__ import annotations

from dataclasses import dataclass, fields

from psygnal import evented
from PySide6.QtCore import QSettings

from attention_explorer.core.stage_colours import (
    DEFAULT_DIVERGING,
    DEFAULT_SEQUENTIAL,
    DIVERGING_MAPS,
    SEQUENTIAL_MAPS,
)
from attention_explorer.display.levels import SCALES

__all__ = ["DIVERGING_MAPS", "SCALES", "SEQUENTIAL_MAPS", "ViewPreferences"]
_CHOICES = {
    "colormap": SEQUENTIAL_MAPS,
    "diverging_colormap": DIVERGING_MAPS,
    "theme": ("system", "light", "dark"),
    "weights_scale": SCALES,
}


@evented
@dataclass
class ViewPreferences:
    """What the user chose for how things look. Assigning a field emits an event.

    ``weights_scale`` is the colour scale of the weights views: "linear" (0..1), "row"
    (each row against its own maximum) or "log".
    """

    colormap: str = DEFAULT_SEQUENTIAL
    diverging_colormap: str = DEFAULT_DIVERGING
    show_values: bool = True
    theme: str = "system"  # system | light | dark
    weights_scale: str = "linear"

    def save(self, settings: QSettings) -> None:
        """Write every preference under the ``view/`` group."""
        for f in fields(self):
            settings.setValue(f"view/{f.name}", getattr(self, f.name))

    @classmethod
    def load(cls, settings: QSettings) -> ViewPreferences:
        """Read the preferences back, keeping defaults for anything missing or invalid."""
        prefs = cls()
        for f in fields(prefs):
            value = settings.value(f"view/{f.name}")
            if value is None:
                continue
            if f.name == "show_values":
                value = value in (True, "true", "1", 1)
            elif value not in _CHOICES.get(f.name, (value,)):
                continue
            setattr(prefs, f.name, value)
        return prefs
