"""View preferences (colour maps, cell values, theme), evented and saved with QSettings."""

from __future__ import annotations

from dataclasses import dataclass, fields

from psygnal import evented
from PySide6.QtCore import QSettings

#: Perceptually uniform, colour-blind-safe sequential maps offered for weights and values.
SEQUENTIAL_MAPS = ("viridis", "cividis", "magma", "inferno", "plasma")
#: Diverging maps for signed stages (scores), centred on 0.
DIVERGING_MAPS = ("CET-D1", "CET-D1A", "CET-D3", "PAL-relaxed_bright")


@evented
@dataclass
class ViewPreferences:
    """What the user chose for how things look. Assigning a field emits an event."""

    colormap: str = "viridis"
    diverging_colormap: str = "CET-D1"
    show_values: bool = True
    theme: str = "system"  # system | light | dark

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
            elif f.name == "colormap" and value not in SEQUENTIAL_MAPS:
                continue
            elif f.name == "diverging_colormap" and value not in DIVERGING_MAPS:
                continue
            elif f.name == "theme" and value not in ("system", "light", "dark"):
                continue
            setattr(prefs, f.name, value)
        return prefs
