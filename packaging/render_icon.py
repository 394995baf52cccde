"""Render resources/icon.svg to resources/icon.png (256x256) with Qt's SVG renderer.

python packaging/render_icon.py [SIZE]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def render_icon(svg: Path, png: Path, size: int = 256) -> Path:
    """Draw ``svg`` into a transparent ``size`` x ``size`` PNG at ``png``; return its path."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 - fonts, painting
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icon: {svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(png), "PNG"):
        raise SystemExit(f"render_icon: cannot write {png}")
    return png


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    print(render_icon(ROOT / "resources" / "icon.svg", ROOT / "resources" / "icon.png", size))
