"""How the main window lays out its parts: the editor beside the stage views in the middle,
and the sizes the docks get on a first start (a saved layout replaces them later)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QScrollArea, QSplitter, QVBoxLayout, QWidget

#: The width the stage column needs to show two views of a small example side by side.
STAGES_TWO_WIDE = 760


def central_area(window: QMainWindow, banner, tokens, matrices, stages) -> QSplitter:
    """Make the window's central widget: ``banner`` over the editor (``tokens`` over
    ``matrices``, scrolling sideways on a small screen) beside ``stages``; returns the
    splitter between the editor and the stage views."""
    left = QWidget()
    left_layout = QVBoxLayout(left)
    left_layout.setContentsMargins(0, 0, 0, 0)
    left_layout.addWidget(tokens)
    left_layout.addWidget(matrices, 1)
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.setObjectName("mainSplitter")
    # The editor's toolbar is wider than the editor needs to be on a small screen: it
    # scrolls sideways there rather than crowd the stage views into one column.
    left_scroll = QScrollArea()
    left_scroll.setObjectName("editorScroll")
    left_scroll.setWidget(left)
    left_scroll.setWidgetResizable(True)
    left_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    left_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    left_scroll.setMinimumWidth(240)
    splitter.addWidget(left_scroll)
    splitter.addWidget(stages)
    splitter.setStretchFactor(0, 2)
    splitter.setStretchFactor(1, 5)
    central = QWidget()
    central_layout = QVBoxLayout(central)
    central_layout.setContentsMargins(4, 4, 4, 4)
    central_layout.addWidget(banner)
    central_layout.addWidget(splitter, 1)
    window.setCentralWidget(central)
    return splitter


def default_layout(window) -> None:
    """First-run sizes for ``window`` (a MainWindow): the whole screen, the stage views
    widest, short bottom docks."""
    screen = window.screen().availableGeometry() if window.screen() else None
    width = screen.width() if screen else 1500
    height = screen.height() if screen else 920
    window.resize(width, height)
    if screen is not None:
        window.move(screen.topLeft())
        # Maximized, so the title bar a window manager adds does not push the status bar
        # off the bottom of the screen.
        window.setWindowState(window.windowState() | Qt.WindowState.WindowMaximized)
    fit_docks(window, width, height)


def fit_docks(window, width: int, height: int) -> None:
    """Share ``width`` x ``height`` of ``window`` (a MainWindow) out: narrow controls, short
    bottom docks (the All heads thumbnails need little room), the rest to the editor and,
    most, to the stage views."""
    scroll = window.controls_dock.widget()
    least = window.controls.minimumSizeHint().width() + 2 * scroll.frameWidth() + 2
    controls = max(least, 300 if width < 1500 else 330)
    window.resizeDocks([window.controls_dock], [controls], Qt.Orientation.Horizontal)
    heads = 260 if width < 1500 else 300
    rest = width - controls - 12
    window.resizeDocks(
        [window.walk_dock, window.heads_dock], [rest - heads, heads], Qt.Orientation.Horizontal
    )
    window.resizeDocks([window.walk_dock], [150 if height < 900 else 190], Qt.Orientation.Vertical)
    # The editor gets all it asks for when the stage views keep room for two side by side
    # (the scores beside the scaled scores, the masked scores beside the weights).
    splitter = window.splitter
    wanted = splitter.widget(0).widget().minimumSizeHint().width() + 6
    editor = max(240, min(wanted, rest - STAGES_TWO_WIDE))
    splitter.setSizes([editor, rest - editor])
