"""Issue 32, items 1 and 2 in the window: File > Open and Save run the session loader and
writer off the GUI thread (a model reference reads the model's files), and nothing they raise
escapes the slot: a problem is one line on ``error``."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

import attention_explorer as ae
from attention_explorer.session import History, Session
from attention_explorer.ui.window import session_file


@pytest.fixture
def document(qtbot, tmp_path):
    parent = QWidget()
    qtbot.addWidget(parent)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    session = Session.from_data(ae.example("starter"))
    return session_file.DocumentController(session, History(session), settings, parent)


def test_open_reads_the_model_off_the_gui_thread(document, model, tmp_path, monkeypatch):
    path = ae.save(ae.from_model(model, "the cat sat", layer=1), tmp_path / "s.json")
    threads = []
    real = session_file.load_session

    def spy(p):
        threads.append(threading.current_thread())
        return real(p)

    monkeypatch.setattr(session_file, "load_session", spy)
    assert document.open(path)
    assert threads and threads[0] is not threading.main_thread()
    assert document.session.name.endswith("layer 1")


def test_save_reads_the_model_off_the_gui_thread(document, model, tmp_path, monkeypatch):
    document.replace(ae.from_model(model, "the cat sat", layer=0))
    threads = []
    real = session_file.save_session

    def spy(*args, **kwargs):
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(session_file, "save_session", spy)
    document.path = tmp_path / "saved.json"
    assert document.save()
    assert threads and threads[0] is not threading.main_thread()
    assert '"model"' in (tmp_path / "saved.json").read_text()


@pytest.mark.parametrize("problem", [PermissionError(13, "Permission denied"), RuntimeError("x")])
def test_nothing_escapes_file_open(document, tmp_path, monkeypatch, qtbot, problem):
    path = ae.save(ae.example("starter"), tmp_path / "s.json")

    def fail(_path):
        raise problem

    monkeypatch.setattr(session_file, "load_session", fail)
    errors = []
    document.error.connect(errors.append)
    assert document.open(path) is False
    assert len(errors) == 1 and errors[0].startswith("Could not open s.json:")
    assert "\n" not in errors[0]


def test_a_slow_open_can_be_cancelled(document, tmp_path, monkeypatch, qtbot):
    path = ae.save(ae.example("starter"), tmp_path / "s.json")
    release = threading.Event()

    def slow(_path):
        release.wait(10)
        raise RuntimeError("too late")

    monkeypatch.setattr(session_file, "load_session", slow)
    monkeypatch.setattr(session_file, "SHOW_PROGRESS_MS", 0)
    from PySide6.QtWidgets import QProgressDialog

    def cancel():
        for widget in document.window.findChildren(QProgressDialog):
            if widget.isVisible():
                widget.canceled.emit()  # as its Cancel button does

    from PySide6.QtCore import QTimer

    QTimer.singleShot(300, cancel)
    before = document.session.name
    assert document.open(path) is False
    release.set()
    assert document.session.name == before
