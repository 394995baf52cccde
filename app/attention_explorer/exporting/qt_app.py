"""A QGuiApplication for rendering, created only when none exists (offscreen when headless)."""

from __future__ import annotations

import os
import sys

from attention_explorer.writing.export_errors import ExportError

_APP = None  # keeps the application we created alive


def needs_offscreen(environ: dict | None = None, platform: str | None = None) -> bool:
    """True on Linux/BSD with no X11 or Wayland display and no QT_QPA_PLATFORM chosen."""
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if platform.startswith(("win", "darwin")) or platform == "cygwin":
        return False
    return not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM"))


#: Qt's font database warns once per font and script it cannot shape ("OpenType support missing
#: for ..., script 11"): about 60 lines for the Hindi example on a system without a Devanagari
#: font. The README says which font package to install; the lines themselves help nobody.
QUIET_LOGGING_RULES = "qt.text.font.db=false"


def quiet_font_warnings() -> None:
    """Silence Qt's per-font shaping warnings (call before the first text is laid out)."""
    from PySide6.QtCore import QLoggingCategory

    QLoggingCategory.setFilterRules(QUIET_LOGGING_RULES)


def ensure_gui_app():
    """Return the running QGuiApplication, creating one if there is none.

    The GUI already has its QApplication, which is used as is. On the command line with no
    display, the ``offscreen`` platform is selected first so that no display is needed.
    """
    global _APP
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtGui import QGuiApplication

    existing = QCoreApplication.instance()
    if existing is not None:
        if not isinstance(existing, QGuiApplication):
            raise ExportError("drawing pictures needs a QGuiApplication, not a QCoreApplication")
        return existing
    if needs_offscreen():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    quiet_font_warnings()
    _APP = QGuiApplication([sys.argv[0] if sys.argv and sys.argv[0] else "attention-explorer"])
    return _APP
