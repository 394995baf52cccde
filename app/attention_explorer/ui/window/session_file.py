"""DocumentController: the file behind the window (new, open, save, recent, unsaved changes).

Opening and saving run the session loader and writer on a worker thread
(:func:`off_thread`): a session saved by reference reads its model's files (the fingerprint,
then the layer), which may be large or slow, and the window stays responsive meanwhile, with
a Cancel button after a moment. No problem escapes a slot: whatever goes wrong is reported
through ``error`` in one line.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEventLoop, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QProgressDialog, QWidget

import attention_explorer.pretrained  # noqa: F401 - installs the model lookup for saved sessions
from attention_explorer.session import (
    History,
    Session,
    SessionData,
    SessionFileError,
    load_session,
    save_session,
    starter_session,
)
from attention_explorer.ui.widgets import dialogs
from attention_explorer.writing.output_policy import OutputReadOnly, check_output

MAX_RECENT = 8
#: A worker that has not finished after this many milliseconds shows a progress dialog.
SHOW_PROGRESS_MS = 400


class Cancelled(Exception):
    """The user cancelled a file operation that was still running."""


def off_thread(work: Callable[[], object], parent: QWidget | None, label: str) -> object:
    """``work()`` run on a daemon worker thread while the GUI thread keeps handling events;
    its result, or the exception it raised (re-raised here). After :data:`SHOW_PROGRESS_MS`
    a modal progress dialog with Cancel shows; Cancel raises :class:`Cancelled` at once (the
    worker's late result is dropped)."""
    outcome: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the GUI thread as it is
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="session-file", daemon=True).start()
    if not done.wait(0.05):
        loop = QEventLoop()
        poll = QTimer()
        poll.setInterval(20)
        dialog = QProgressDialog(label, "Cancel", 0, 0, parent)
        poll.timeout.connect(lambda: (done.is_set() or dialog.wasCanceled()) and loop.quit())
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setAutoReset(False)
        dialog.canceled.connect(loop.quit)
        QTimer.singleShot(SHOW_PROGRESS_MS, loop, lambda: done.is_set() or dialog.show())
        poll.start()
        if not done.is_set():
            loop.exec()
        poll.stop()
        dialog.reset()
        dialog.deleteLater()
        if not done.is_set():
            raise Cancelled(label)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


FILE_FILTER = "Attention Explorer sessions (*.json);;All files (*)"
#: Save As: the same, plus a standalone choice (every number in the file; no model needed).
STANDALONE_FILTER = "Standalone session, numbers included (*.json)"
SAVE_FILTER = f"Attention Explorer sessions (*.json);;{STANDALONE_FILTER};;All files (*)"


class DocumentController(QObject):
    """Knows the session's file path and whether it has unsaved changes.

    ``title_changed(str)`` gives the window title; ``recent_changed()`` fires when the recent
    files list changes; ``replaced()`` fires after a new document (New, Open, an example)
    replaces the old one; ``error(str)`` reports a file that could not be read or written (the
    session in the window is left as it was).
    """

    title_changed = Signal(str)
    recent_changed = Signal()
    replaced = Signal()
    error = Signal(str)

    def __init__(self, session: Session, history: History, settings: QSettings, parent: QWidget):
        super().__init__(parent)
        self.session = session
        self.history = history
        self.settings = settings
        self.window = parent
        self.path: Path | None = None
        #: Save writes every number (Save As > Standalone) instead of a model reference.
        self.standalone = False
        history.changed.connect(self._emit_title)
        session.events.name.connect(self._emit_title)

    # -- state -------------------------------------------------------------------------------
    def title(self) -> str:
        """Window title: the session's file or name, with '*' while it has unsaved changes."""
        name = self.path.name if self.path else self.session.name
        star = "*" if self.history.is_dirty else ""
        return f"{name}{star} — Attention Explorer"

    def _emit_title(self, *_args) -> None:
        self.title_changed.emit(self.title())

    def recent_files(self) -> list[str]:
        """Recently opened or saved session files, newest first, existing ones only."""
        value = self.settings.value("recent_files", [])
        files = [value] if isinstance(value, str) else list(value or [])
        return [f for f in files if os.path.isfile(f)][:MAX_RECENT]  # never raises

    def _remember(self, path: Path) -> None:
        files = [str(path)] + [f for f in self.recent_files() if f != str(path)]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self.recent_changed.emit()

    # -- actions -----------------------------------------------------------------------------
    def replace(self, data: SessionData, path: Path | None = None) -> None:
        """Show ``data`` as a fresh document (undo history starts anew)."""
        self.session.load(data)
        self.history.clear()
        self.path = path
        self.standalone = False
        self._emit_title()
        self.replaced.emit()

    def _replace_or_keep(self, data: SessionData, path: Path) -> bool:
        """Replace the document; if a view refuses the new one, put the old one back."""
        before, before_path = self.session.data(), self.path
        try:
            self.replace(data, path)
        except Exception as exc:  # noqa: BLE001 - the window must keep the user's document
            self.session.load(before)
            self.history.clear()
            self.path = before_path
            self._emit_title()
            self.error.emit(f"Could not open {path.name}: {exc}")
            return False
        return True

    def new(self) -> None:
        """Start over from the starter example, after asking about unsaved changes."""
        if self.maybe_save():
            self.replace(starter_session())

    def open(self, path: str | Path | None = None) -> bool:
        """Open a session file (asking for one when ``path`` is None)."""
        if not self.maybe_save():
            return False
        if path is None:
            start = self.settings.value("last_folder", str(Path.home()))
            chosen, _ = QFileDialog.getOpenFileName(self.window, "Open session", start, FILE_FILTER)
            if not chosen:
                return False
            path = chosen
        path = Path(path)
        try:  # off the GUI thread: a model reference reads the model's files
            data = off_thread(lambda: load_session(path), self.window, f"Opening {path.name}…")
        except Cancelled:
            return False
        except SessionFileError as exc:
            self.error.emit(f"Could not open {path.name}: {exc}")
            return False
        except Exception as exc:  # noqa: BLE001 - nothing may escape the slot
            self.error.emit(f"Could not open {path.name}: {type(exc).__name__}: {exc}")
            return False
        if not self._replace_or_keep(data, path):
            return False
        self.settings.setValue("last_folder", str(path.parent))
        self._remember(path)
        return True

    def save(self) -> bool:
        """Save to the current file, or ask for one."""
        if self.path is None:
            return self.save_as()
        return self._write(self.path)

    def save_as(self) -> bool:
        """Ask for a file name and save there."""
        start = str(
            self.path
            or Path(self.settings.value("last_folder", str(Path.home())))
            / f"{self.session.name or 'session'}.json"
        )
        chosen, kind = QFileDialog.getSaveFileName(self.window, "Save session", start, SAVE_FILTER)
        if not chosen:
            return False
        path = Path(chosen)
        if path.suffix == "":
            path = path.with_suffix(".json")
        self.standalone = kind == STANDALONE_FILTER  # later File > Save keeps the choice
        return self._write(path)

    def _may_replace_read_only(self, path: Path) -> bool | None:
        """None: not a read-only file; True: the user chose to replace it; False: cancelled."""
        try:
            check_output(path)
        except OutputReadOnly:
            answer = dialogs.question(
                self.window,
                "Read-only file",
                f"{path.name} is read-only. Replace it anyway?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel,
            )
            return answer == QMessageBox.StandardButton.Yes
        except ValueError:
            return None  # any other refusal is reported by save_session, in one line
        return None

    def _write(self, path: Path) -> bool:
        replace_read_only = self._may_replace_read_only(path)
        if replace_read_only is False:
            return False
        data, standalone = self.session.data(), self.standalone
        try:  # off the GUI thread: saving by reference reads the model's files
            off_thread(
                lambda: save_session(
                    path, data, allow_read_only=bool(replace_read_only), standalone=standalone
                ),
                self.window,
                f"Saving {path.name}…",
            )
        except Cancelled:
            return False
        except (SessionFileError, OSError) as exc:  # the document stays unsaved (title keeps *)
            self.error.emit(f"Could not save {path.name}: {exc}")
            return False
        except Exception as exc:  # noqa: BLE001 - nothing may escape the slot
            self.error.emit(f"Could not save {path.name}: {type(exc).__name__}: {exc}")
            return False
        self.path = path
        self.history.mark_clean()
        self.settings.setValue("last_folder", str(path.parent))
        self._remember(path)
        return True

    def maybe_save(self) -> bool:
        """Ask what to do with unsaved changes; False means the user cancelled."""
        if not self.history.is_dirty:
            return True
        answer = dialogs.question(
            self.window,
            "Unsaved changes",
            f"Save the changes to {self.path.name if self.path else self.session.name}?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard
