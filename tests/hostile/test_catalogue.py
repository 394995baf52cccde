"""Every named hostile file is refused the documented way, by every way in.

Command line (``compute``, ``explain``, ``export``): exit code 2, exactly one line on stderr, no
traceback, no file left behind. Window (``DocumentController.open``, offscreen): a message box,
the window keeps running and its document is unchanged.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from catalogue import CASES  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402

from attention_explorer.cli import main  # noqa: E402
from attention_explorer.session import SessionFileError, load_session  # noqa: E402
from attention_explorer.ui.widgets import dialogs as message_boxes

#: A refusal must come quickly: the budget and the schema refuse before any real work.
SECONDS_PER_REFUSAL = 5.0


def test_the_catalogue_is_large_and_covers_every_class():
    classes = {kind for kind, _ in CASES.values()}
    assert len(CASES) >= 40
    assert {
        "huge number",
        "deep structure",
        "wrong JSON type",
        "not a regular file",
        "unbounded work",
        "too big",
        "loose types",
        "invalid Unicode",
    } <= classes


def test_every_class_of_the_catalogue_is_refused_by_the_loader_in_its_own_words(tmp_path):
    """On the code, not only the data: one case of each class goes through the real loader,
    which refuses it with a one-line message; the classes are told apart (not one catch-all
    message for every kind of damage)."""
    messages = {}
    for name in sorted(CASES):
        kind, make = CASES[name]
        if kind in messages:
            continue
        folder = tmp_path / f"case{len(messages)}"
        folder.mkdir()
        with pytest.raises(SessionFileError) as info:
            load_session(make(folder))
        text = str(info.value)
        assert text.strip() and "\n" not in text, (kind, text)
        messages[kind] = text
    assert len(messages) >= 8
    assert len(set(messages.values())) >= len(messages) - 1, messages


@pytest.fixture
def case_file(request, tmp_path):
    """The hostile file of the case named by the test's parameter, alone in its folder."""
    folder = tmp_path / "case"
    folder.mkdir()
    path = CASES[request.param][1](folder)
    return path


def leftovers(folder, path) -> list[str]:
    """Files in the case folder other than the case itself."""
    return sorted(p.name for p in folder.iterdir() if p.name != path.name)


@pytest.mark.parametrize("case_file", sorted(CASES), indirect=True)
def test_loader_raises_only_the_documented_error(case_file):
    started = time.perf_counter()
    with pytest.raises(SessionFileError) as info:
        load_session(case_file)
    assert time.perf_counter() - started < SECONDS_PER_REFUSAL
    assert "\n" not in str(info.value) and str(info.value).strip()


COMMANDS = {
    "compute": lambda path, out: ["compute", str(path)],
    "compute-out": lambda path, out: ["compute", str(path), "--out", str(out / "trace.npz")],
    "explain": lambda path, out: ["explain", str(path), "--cell", "0,0"],
    "export": lambda path, out: ["export", str(path), "--format", "csv", "--out", str(out)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case_file", sorted(CASES), indirect=True)
def test_command_line_gives_one_line_and_exit_2(case_file, command, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    code = main(COMMANDS[command](case_file, out))
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert captured.out == ""
    assert list(out.iterdir()) == []
    assert leftovers(case_file.parent, case_file) == []


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    """One real window for the whole catalogue, with message boxes recorded, not shown."""
    from attention_explorer.ui.window.main_window import MainWindow

    shown: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            message_boxes, "warning", lambda parent, title, text, *a, **k: shown.append(text)
        )
        ini = tmp_path_factory.mktemp("settings") / "s.ini"
        win = MainWindow(settings=QSettings(str(ini), QSettings.Format.IniFormat))
        win.shown_messages = shown
        win.show()
        yield win
        win.history.mark_clean()
        win.live.shutdown()
        win.close()


@pytest.mark.parametrize("case_file", sorted(CASES), indirect=True)
def test_window_shows_a_message_and_keeps_its_document(window, case_file, qapp):
    before, title, count = window.session.data(), window.windowTitle(), len(window.shown_messages)
    assert window.document.open(case_file) is False
    qapp.processEvents()
    assert window.isVisible()
    assert window.session.data() == before
    assert window.session.data().inputs == before.inputs
    assert window.windowTitle() == title
    messages = window.shown_messages[count:]
    assert len(messages) == 1 and case_file.name in messages[0] and "\n" not in messages[0]
    assert leftovers(case_file.parent, case_file) == []
