"""Large pastes: parsed on a worker thread in chunks of rows, with progress and Cancel.

A 1000 x 1000 block copied from a spreadsheet is about 7 million characters: parsed on the GUI
thread it would freeze the window for seconds. Text up to :data:`QUICK_CHARS` is parsed at once
(well under a second); longer text goes to :class:`PasteJob`, which parses
:data:`CHUNK_ROWS` rows at a time on a QThread, reports the share done, and stops between
chunks when cancelled; :class:`BackgroundPaste` runs it for a matrix editor, with a progress
dialog and Cancel, and writes the block when it is read. How much text a paste may hold
follows the session's own sizes: :func:`paste_limit` allows :data:`CHARS_PER_NUMBER`
characters for every cell of the slice it is pasted into (at least the old fixed limit), so
any matrix the session allows can be pasted.
"""

from __future__ import annotations

import re

import numpy as np
from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtWidgets import QProgressDialog

from attention_explorer.session.size_guard import MAX_PASTE_CHARS
from attention_explorer.ui.widgets.number_text import NumberTextError, parse_block

#: Pastes up to this many characters are parsed at once on the GUI thread.
QUICK_CHARS = 200_000
#: Characters one pasted number may take with its separator ("-1.2345678901234567e-10\t").
CHARS_PER_NUMBER = 32
#: Rows parsed between two progress reports (and two checks for Cancel).
CHUNK_ROWS = 500


def paste_limit(rows: int, cols: int) -> int:
    """The most characters a paste into a ``rows`` x ``cols`` slice may hold: room for every
    cell of the slice, never less than the fixed limit small slices had."""
    return max(MAX_PASTE_CHARS, rows * cols * CHARS_PER_NUMBER)


def check_paste_size(text: str, rows: int, cols: int) -> str | None:
    """None when ``text`` may be parsed for a ``rows`` x ``cols`` slice, else why not (O(1))."""
    limit = paste_limit(rows, cols)
    if len(text) <= limit:
        return None
    return (
        f"the clipboard holds {len(text):,} characters, more than the {limit:,} a paste into "
        f"this {rows}x{cols} matrix takes"
    )


def _lines(text: str) -> list[str]:
    """The text's rows, blank lines at either end left out."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


def _shifted(error: NumberTextError, offset: int) -> NumberTextError:
    """``error`` of a chunk, its row numbers counted from the top of the whole block."""
    text = re.sub(r"\brow (\d+)", lambda m: f"row {int(m.group(1)) + offset}", str(error))
    return NumberTextError(text)


def parse_in_chunks(text: str, progress=None, cancelled=None) -> np.ndarray | None:
    """The block in ``text`` (as :func:`parse_block` reads it), parsed :data:`CHUNK_ROWS` rows
    at a time; ``progress(share)`` after each chunk, None as soon as ``cancelled()`` is true.
    Bracketed (numpy-style) text is read in one go."""
    stripped = text.strip()
    if stripped.startswith("[") or stripped.startswith(("array", "np.", "numpy.")):
        return parse_block(text)
    lines = _lines(text)
    if not lines:
        raise NumberTextError("the clipboard holds no numbers")
    parts: list[np.ndarray] = []  # [rows of a chunk, cols] each
    for start in range(0, len(lines), CHUNK_ROWS):
        if cancelled is not None and cancelled():
            return None
        chunk = lines[start : start + CHUNK_ROWS]
        for k, line in enumerate(chunk):
            if not line.strip():
                raise NumberTextError(
                    f"row {start + k + 1} is empty; remove blank lines between rows"
                )
        try:
            block = parse_block("\n".join(chunk))  # [len(chunk), cols]
        except NumberTextError as error:
            raise _shifted(error, start) from None
        if parts and block.shape[1] != parts[0].shape[1]:
            raise NumberTextError(
                f"row {start + 1} has {block.shape[1]} numbers but row 1 has "
                f"{parts[0].shape[1]}; every row needs the same count"
            )
        parts.append(block)
        if progress is not None:
            progress(min(1.0, (start + len(chunk)) / len(lines)))
    return np.concatenate(parts, axis=0)  # [rows, cols]


class PasteJob(QThread):
    """Parses one pasted text on its own thread: ``progress(percent)`` while it reads,
    then ``parsed(block)`` or ``failed(message)``; :meth:`cancel` stops it between chunks
    (then neither is emitted)."""

    progress = Signal(int)
    parsed = Signal(object)
    failed = Signal(str)

    def __init__(self, text: str, parent=None):
        super().__init__(parent)
        self._text = text
        self._cancelled = False

    def cancel(self) -> None:
        """Stop at the next chunk; nothing is emitted after."""
        self._cancelled = True

    def is_cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancelled

    def run(self) -> None:
        """Parse the text (on the job's thread)."""
        try:
            block = parse_in_chunks(
                self._text,
                progress=lambda share: self.progress.emit(round(100 * share)),
                cancelled=self.is_cancelled,
            )
        except NumberTextError as error:
            if not self._cancelled:
                self.failed.emit(str(error))
            return
        if block is not None and not self._cancelled:
            self.parsed.emit(block)


class BackgroundPaste(QObject):
    """A matrix editor's large paste: a :class:`PasteJob` with a progress dialog and Cancel;
    the block read is written through ``editor.paste_block``. ``finished(written)`` at the
    end (False when cancelled or refused)."""

    finished = Signal(bool)

    def __init__(self, editor):
        super().__init__(editor)
        self.editor = editor
        self.job: PasteJob | None = None
        self.dialog: QProgressDialog | None = None

    def running(self) -> bool:
        """True while a paste is being read."""
        return self.job is not None

    def start(self, text: str) -> bool:
        """Start reading ``text``; False (and a note) while another paste is being read."""
        editor = self.editor
        if self.job is not None:
            editor.show_note("The numbers pasted before are still being read")
            return False
        where = editor.model().slice_label()
        self.job = job = PasteJob(text, self)
        self.dialog = dialog = QProgressDialog(
            f"Reading {len(text):,} pasted characters into {where}…", "Cancel", 0, 100, editor
        )
        dialog.setWindowTitle("Paste")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(300)  # a quick read never flashes a dialog
        dialog.setAutoClose(False)
        job.progress.connect(dialog.setValue)
        dialog.canceled.connect(self.cancel)
        job.parsed.connect(self._on_parsed)
        job.failed.connect(self._on_failed)
        job.finished.connect(self._on_job_done)
        editor.show_note(f"Reading {len(text):,} pasted characters…")
        job.start()
        return True

    def cancel(self) -> None:
        """Stop reading; nothing changes."""
        job = self.job
        if job is None or job.is_cancelled():
            return
        job.cancel()
        self._close_dialog()
        where = self.editor.model().slice_label()
        self.editor.show_note(f"Paste into {where} cancelled; nothing changed")
        self.finished.emit(False)

    def stop(self) -> None:
        """Cancel and wait for the thread (before the editor goes away)."""
        job = self.job
        if job is not None:
            job.cancel()
            job.wait()
        self._close_dialog()

    def _live(self) -> bool:
        return self.job is not None and not self.job.is_cancelled()

    def _on_parsed(self, block) -> None:
        if not self._live():
            return
        self._close_dialog()
        self.editor.clear_message()
        self.finished.emit(self.editor.paste_block(block))

    def _on_failed(self, message: str) -> None:
        if not self._live():
            return
        self._close_dialog()
        where = self.editor.model().slice_label()
        self.editor.show_error(f"Paste into {where}: {message}; nothing was changed")
        self.finished.emit(False)

    def _on_job_done(self) -> None:
        job, self.job = self.job, None
        if job is not None:
            job.deleteLater()

    def _close_dialog(self) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            dialog.canceled.disconnect(self.cancel)
            dialog.close()
            dialog.deleteLater()
