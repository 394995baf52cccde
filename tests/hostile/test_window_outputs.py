"""The window follows the same output policy: it asks before replacing a read-only file, refuses
foreign links, devices and pipes in one message, never saves a file it could not open again,
and refuses a 10 MB paste at once, without parsing it."""

from __future__ import annotations

import os
import stat

import pytest
from outputs import FOREIGN_UID, OLD, snapshot
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from attention_explorer.session import Session, load_session
from attention_explorer.session.size_guard import MAX_PASTE_CHARS
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.widgets import dialogs as message_boxes

Button = QMessageBox.StandardButton


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """A real window; warnings are recorded and questions answered from ``win.answers``."""
    from attention_explorer.ui.window.main_window import MainWindow

    shown: list[str] = []
    asked: list[str] = []
    answers: list = []
    monkeypatch.setattr(
        message_boxes, "warning", lambda _p, _t, text, *_a, **_k: shown.append(text)
    )

    def question(_parent, _title, text, *_a, **_k):
        asked.append(text)
        return answers.pop(0) if answers else Button.Discard

    monkeypatch.setattr(message_boxes, "question", question)
    win = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    win.shown_messages, win.asked, win.answers = shown, asked, answers
    qtbot.addWidget(win)
    win.show()
    with win.history.transaction("edit"):
        win.session.name = "edited"
    yield win
    win.history.mark_clean()
    win.live.shutdown()


def _read_only(tmp_path):
    path = tmp_path / "ro.json"
    path.write_bytes(OLD)
    path.chmod(0o444)
    return path


def test_read_only_file_asks_and_replaces_on_yes(window, tmp_path):
    path = _read_only(tmp_path)
    window.answers.append(Button.Yes)
    assert window.document._write(path) is True
    assert len(window.asked) == 1 and "ro.json is read-only" in window.asked[0]
    assert load_session(path).name == "edited"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o444  # still read-only afterwards
    assert "*" not in window.windowTitle()


def test_read_only_file_is_kept_on_cancel(window, tmp_path):
    path = _read_only(tmp_path)
    window.answers.append(Button.Cancel)
    assert window.document._write(path) is False
    assert path.read_bytes() == OLD and window.shown_messages == []
    assert "*" in window.windowTitle()


def _foreign_link(tmp_path):
    target = tmp_path / "victim.json"
    target.write_bytes(OLD)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    os.lchown(link, FOREIGN_UID, FOREIGN_UID)
    return link


def _char_device(tmp_path):
    path = tmp_path / "null.json"
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


def _fifo(tmp_path):
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


REFUSED = {
    "foreign-symlink": (_foreign_link, "owned by another user"),
    "character-device": (_char_device, "character device"),
    "named-pipe": (_fifo, "named pipe"),
    "dangling-symlink": (
        lambda t: (t / "d.json").symlink_to(t / "gone") or t / "d.json",
        "missing file",
    ),
}


@pytest.mark.skipif(os.geteuid() != 0, reason="planting devices and foreign links")
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_window_refuses_in_one_message(window, tmp_path, name):
    make, words = REFUSED[name]
    path = make(tmp_path)
    before = snapshot(path)
    assert window.document._write(path) is False
    assert len(window.shown_messages) == 1
    message = window.shown_messages[0]
    assert words in message and path.name in message and "\n" not in message
    assert snapshot(path) == before and "*" in window.windowTitle()
    assert [p.name for p in tmp_path.glob(".ae-*")] == []


def test_window_refuses_a_session_it_could_not_open_again(window, tmp_path):
    with window.history.transaction("rename"):
        window.session.name = "n" * 5000
    assert window.document._write(tmp_path / "long.json") is False
    assert "not saved" in window.shown_messages[-1] and "name" in window.shown_messages[-1]
    assert list(tmp_path.glob("long.json")) == []


@pytest.fixture
def editor(qtbot):
    from attention_explorer.ui.editing.matrix_panel import MatrixPanel
    from attention_explorer.ui.state.panel_context import PanelContext

    session = Session.from_data(starter_session())
    panel = MatrixPanel(PanelContext.for_session(session))
    qtbot.addWidget(panel)
    panel.show()
    name = panel.tab_names()[0]
    editor = panel.editor(name)
    editor.session, editor.name = session, name
    return editor


@pytest.mark.parametrize("size", [10_000_000, MAX_PASTE_CHARS + 1])
def test_a_huge_paste_is_refused_without_parsing(editor, size, monkeypatch):
    import attention_explorer.ui.editing.matrix_editor as matrix_editor

    def never(_text):
        raise AssertionError("the text was parsed")

    monkeypatch.setattr(matrix_editor, "parse_block", never)  # refused before parsing
    before = editor.session.data().inputs
    text = ("1.5\t" * (size // 4 + 1))[:size]
    assert editor.paste(text) is False
    assert "characters" in editor.message() and "nothing changed" in editor.message()
    assert editor.session.data().inputs == before


@pytest.mark.skipif(os.geteuid() != 0, reason="planting devices and foreign links")
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_export_dialog_refuses_in_its_message_line(qtbot, tmp_path, name):
    from PySide6.QtWidgets import QWidget

    import attention_explorer as ae
    from attention_explorer.ui.export.export_dialog import ExportDialog
    from attention_explorer.ui.state.preferences import ViewPreferences

    make, words = REFUSED[name]
    path = make(tmp_path).rename(tmp_path / "w.csv") if name != "named-pipe" else None
    path = path or _fifo_named(tmp_path, "w.csv")
    before = snapshot(path)
    parent = QWidget()
    qtbot.addWidget(parent)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    trace = ae.compute(ae.example("starter"))
    dialog = ExportDialog(parent, trace, ViewPreferences(), settings, "weights", 0)
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("csv"))
    dialog.path_edit.setText(str(path))
    assert dialog.export() is False
    assert words in dialog.message.text() and "w.csv" in dialog.message.text()
    assert snapshot(path) == before


def _fifo_named(folder, name):
    path = folder / name
    os.mkfifo(path)
    return path


def test_model_dock_refuses_a_10_million_character_text_before_reading(qtbot, tiny_model):
    from attention_explorer.ui.model import model_loader

    def never(_model):
        raise AssertionError("the model was read")

    loader = model_loader.ModelLoader()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model_loader, "load_model", never)
        with qtbot.waitSignal(loader.failed, timeout=20_000) as failed:
            loader.load_overview(str(tiny_model), "a" * 10_000_000)
    assert "10,000,000 characters" in failed.args[0] and "16 positions" in failed.args[0]
