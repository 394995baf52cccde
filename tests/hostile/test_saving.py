"""Saving keeps what the user had: the file's mode, symlinks, and the unsaved mark on failure."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from attention_explorer.session import SessionFileError, load_session, save_session
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.widgets import dialogs as message_boxes


def mode_of(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o664])
def test_saving_over_a_file_keeps_its_mode(tmp_path, mode):
    path = tmp_path / "s.json"
    path.write_text("{}")
    path.chmod(mode)
    save_session(path, starter_session())
    assert mode_of(path) == mode
    assert load_session(path) == starter_session()


def test_a_new_file_gets_the_usual_mode_not_0600(tmp_path):
    umask = os.umask(0o022)
    try:
        save_session(tmp_path / "new.json", starter_session())
    finally:
        os.umask(umask)
    assert mode_of(tmp_path / "new.json") == 0o644


def test_saving_through_a_symlink_writes_its_target(tmp_path):
    target = tmp_path / "real" / "s.json"
    target.parent.mkdir()
    target.write_text("{}")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    save_session(link, starter_session())
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert load_session(target) == starter_session()
    assert mode_of(target) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["s.json"]


def test_saving_into_a_missing_folder_is_one_line(tmp_path):
    with pytest.raises(SessionFileError, match="does not exist") as info:
        save_session(tmp_path / "nope" / "s.json", starter_session())
    assert "\n" not in str(info.value)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    from attention_explorer.ui.window.main_window import MainWindow

    shown: list[str] = []
    monkeypatch.setattr(
        message_boxes, "warning", lambda _p, _t, text, *_a, **_k: shown.append(text)
    )
    discard = QMessageBox.StandardButton.Discard  # closing never waits on "save changes?"
    monkeypatch.setattr(message_boxes, "question", lambda *_a, **_k: discard)
    win = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    win.shown_messages = shown
    qtbot.addWidget(win)
    win.show()
    yield win
    win.history.mark_clean()
    win.live.shutdown()


def test_a_failed_save_shows_a_dialog_and_keeps_the_unsaved_mark(window):
    read_only = Path("/sys")  # a read-only file system, even for root
    if not read_only.is_dir() or os.access(read_only, os.W_OK) and not _refuses(read_only):
        pytest.skip("no read-only folder on this system")
    with window.history.transaction("edit"):
        window.session.name = "edited"
    assert "*" in window.windowTitle()
    assert window.document._write(read_only / "session.json") is False
    assert len(window.shown_messages) == 1 and "not writable" in window.shown_messages[0]
    assert "*" in window.windowTitle() and window.document.path is None
    assert not (read_only / "session.json").exists()


def _refuses(folder: Path) -> bool:
    try:
        save_session(folder / "probe.json", starter_session())
    except SessionFileError:
        return True
    (folder / "probe.json").unlink()
    return False


def test_saving_into_a_file_where_a_folder_should_be_shows_a_dialog(window, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    with window.history.transaction("edit"):
        window.session.name = "edited"
    assert window.document._write(blocker / "s.json") is False
    assert "not a folder" in window.shown_messages[-1]
    assert "*" in window.windowTitle()
