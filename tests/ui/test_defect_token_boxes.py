"""Issue 31.8: opening a 3-token example after the 4-token starter leaves no stale name box
in the token strip (it read ``t1 t2 t3 down``, the ``down`` box visible and focusable)."""

from main_window_checks import open_example
from PySide6.QtWidgets import QLineEdit


def boxes_in_sight(strip) -> list[str]:
    """The texts of the name boxes a learner can see in the strip, left to right."""
    found = [
        edit
        for edit in strip.findChildren(QLineEdit)
        if edit.isVisibleTo(strip) and edit.property("tokenIndex") is not None
    ]
    found.sort(key=lambda e: (e.mapTo(strip, e.rect().topLeft()).y(), e.x()))
    return [edit.text() for edit in found]


def test_a_shorter_example_leaves_no_stale_token_box(qtbot, window):
    strip = window.tokens
    assert boxes_in_sight(strip) == list(window.session.tokens)
    open_example(qtbot, window, "three-tokens")
    qtbot.wait(50)  # deleteLater runs
    assert len(window.session.tokens) == 3
    assert boxes_in_sight(strip) == list(window.session.tokens)
    open_example(qtbot, window, "starter")
    open_example(qtbot, window, "causal-mask")
    qtbot.wait(50)
    assert boxes_in_sight(strip) == list(window.session.tokens)


def test_no_stale_box_even_before_deferred_deletions_run(qtbot, window):
    """A box removed from the strip is out of sight and out of the Tab order at once, not only
    once Qt's deferred deletion runs (which waits for the event loop that asked for it: inside
    a modal dialog or a menu's loop that can be much later)."""
    from attention_explorer.session.examples import example_or_starter

    strip = window.tokens
    window.document.replace(example_or_starter("three-tokens"))  # no event loop runs here
    assert boxes_in_sight(strip) == ["t1", "t2", "t3"]
    focusable = [
        e for e in strip.findChildren(QLineEdit) if e.isVisibleTo(strip) and e.focusPolicy()
    ]
    assert len(focusable) == 3
