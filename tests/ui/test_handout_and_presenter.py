"""Teaching aids (issue 20, item 12): the PDF handout, one page per walkthrough step, from
the window and from the command line; presenter mode (View > Presenter, F5)."""

import re
import subprocess
import sys

import pytest
from window_fixtures import explorer_window

from attention_explorer import api
from attention_explorer.exporting import ExportError
from attention_explorer.exporting.handout import export_handout
from attention_explorer.ui.walkthrough.walkthrough_actions import write_handout
from attention_explorer.walkthrough.follow import session_steps


def pdf_pages(path) -> int:
    """Pages of a PDF, counted from its /Type /Page objects (not /Pages)."""
    data = path.read_bytes()
    assert data.startswith(b"%PDF")
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", data))


@pytest.mark.parametrize("name", ["starter", "causal-mask", "minilm-it-cat"])
def test_the_handout_has_one_page_per_step(qapp, tmp_path, name):
    data = api.example(name)
    trace = api.compute(data)
    steps, _ = session_steps(trace, data)
    path = export_handout(trace, steps, tmp_path / "walk.pdf", name=data.name)
    assert pdf_pages(path) == len(steps) >= 8


def test_the_handout_refuses_a_name_that_is_not_a_pdf(qapp, tmp_path):
    data = api.example("starter")
    trace = api.compute(data)
    steps, _ = session_steps(trace, data)
    with pytest.raises(ExportError, match="PDF"):
        export_handout(trace, steps, tmp_path / "walk.png")
    assert not (tmp_path / "walk.png").exists()


def test_the_handout_command(tmp_path):
    out = tmp_path / "walk.pdf"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "attention_explorer",
            "handout",
            "--example",
            "minilm-it-cat",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    data = api.example("minilm-it-cat")
    steps, follow = session_steps(api.compute(data), data)
    assert pdf_pages(out) == len(steps)
    assert f"({len(steps)} pages)" in run.stdout
    assert follow.head == 11  # the example's own head and query, as the window opens it
    session = tmp_path / "s.json"
    api.save(api.example("causal-mask"), session)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "attention_explorer",
            "handout",
            str(session),
            "--out",
            str(tmp_path / "s.pdf"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "attention_explorer", "handout", "--example", "starter"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_window_writes_the_walkthrough_it_follows(qtbot, tmp_path, dialogs):
    with explorer_window(qtbot, tmp_path) as win:
        win.session.selected_head = 1  # the learner's head: the handout follows it too
        path = write_handout(win, tmp_path / "from-window.pdf")
        steps = win.walkthrough.steps()
        assert path is not None and pdf_pages(path) == len(steps)
        assert next(s for s in steps if s.key == "scores").head == 1


def test_presenter_mode_enlarges_the_step_and_puts_panels_away(qtbot, tmp_path, dialogs):
    with explorer_window(qtbot, tmp_path) as win:
        walk = win.walkthrough
        size = walk.title.font().pointSizeF()
        narration = walk.narration.font().pointSizeF()
        height = win.walk_dock.height()
        assert win.controls_dock.isVisible()
        action = win.menus.teaching.presenter_action
        assert action.shortcut().toString() == "F5" and action in win.findChildren(type(action))
        action.trigger()  # View > Presenter, or F5
        assert win.presenter.active() and win.menus.teaching.presenter_action.isChecked()
        assert walk.title.font().pointSizeF() > size * 1.3
        assert walk.narration.font().pointSizeF() > narration
        assert not win.controls_dock.isVisible() and not win.heads_dock.isVisible()
        qtbot.waitUntil(lambda: win.walk_dock.height() > height)
        walk.go_next()  # still a working walkthrough
        assert walk.index() == 1
        action.trigger()
        assert not win.presenter.active() and not action.isChecked()
        assert walk.title.font().pointSizeF() == size
        assert win.controls_dock.isVisible() and win.heads_dock.isVisible()
