"""The Generate window's remembered choices (steps, temperature, top-k, top-p, seed), saved
with the app's QSettings under ``generate/`` as the view preferences are under ``view/``, so
the next run (and the next session) starts from the last ones. A value missing or out of
range reads as its default."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from PySide6.QtCore import QSettings

from attention_explorer.generation.decode import MOST_STEPS

MOST_SEED = 2**31 - 1
MOST_TEMPERATURE = 10.0


@dataclass
class GeneratePreferences:
    """``top_k`` 0 and ``top_p`` 0 mean off (no cut); ``temperature`` 0 is greedy."""

    steps: int = 8
    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 0.0
    seed: int = 0

    def save(self, settings: QSettings) -> None:
        """Write every choice under ``generate/``."""
        for f in fields(self):
            settings.setValue(f"generate/{f.name}", getattr(self, f.name))

    @classmethod
    def load(cls, settings: QSettings) -> GeneratePreferences:
        """Read the choices back, keeping the default of anything missing or invalid."""
        prefs = cls()
        ranges = {
            "steps": (1, MOST_STEPS),
            "temperature": (0.0, MOST_TEMPERATURE),
            "top_k": (0, 1_000_000),
            "top_p": (0.0, 1.0),
            "seed": (0, MOST_SEED),
        }
        for f in fields(prefs):
            value = settings.value(f"generate/{f.name}")
            kind = type(getattr(prefs, f.name))
            try:
                value = kind(float(value)) if kind is int else float(value)
            except (TypeError, ValueError, OverflowError):
                continue
            low, high = ranges[f.name]
            if math.isfinite(value) and low <= value <= high:
                setattr(prefs, f.name, value)
        return prefs
