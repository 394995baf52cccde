"""show_window(): the window on a session given as data (the Python API's ``ae.show``)."""

from __future__ import annotations

from attention_explorer.session.document import SessionData


def show_window(data: SessionData | None = None, block: bool = True):
    """Open the main window on ``data`` (default: the starter) as a new, unsaved document.

    With ``block`` runs the event loop and returns its exit code when the window closes;
    otherwise returns the window (the caller's event loop, e.g. IPython's ``%gui qt``, runs it).
    """
    from attention_explorer.ui.window.app import create_application
    from attention_explorer.ui.window.main_window import MainWindow

    app = create_application()
    window = MainWindow()
    if data is not None:
        window.document.replace(data)
    window.show()
    if not block:
        return window
    return app.exec()
