"""In the real window, no listener ever sees a config that disagrees with the inputs."""

import pytest
from window_fixtures import RECOMPUTE_MS, choose, dialogs, window  # noqa: F401

from attention_explorer.engine.inputs import validate_inputs


@pytest.fixture
def mismatches(window):  # noqa: F811
    """Every event of the window's session, checked with validate_inputs as it arrives."""
    found: list[str] = []
    s = window.session

    def check(info):
        try:
            n, m = validate_inputs(s.config, s.inputs)
        except Exception as exc:  # noqa: BLE001 - any refusal is what this looks for
            found.append(f"{info.signal.name}: {exc}")
            return
        if (n, m) != (len(s.tokens), len(s.key_tokens)):
            found.append(f"{info.signal.name}: {n}x{m} for {len(s.tokens)} tokens")

    s.events.all.connect(check)
    return found


def test_resize_undo_redo_and_load_reach_listeners_consistently(qtbot, window, mismatches):  # noqa: F811
    controls = window.controls
    choose(controls.heads, 4)
    assert window.session.config.heads == 4
    controls.tokens.setValue(6)
    choose(controls.mode, "direct")
    assert window.session.config.mode == "direct"
    assert window.matrices.tab_names()[:3] == ["Q", "K", "V"]
    for _ in range(3):
        window.history.undo()
    assert window.session.config.heads == 2 and len(window.session.tokens) == 4
    window.history.redo()
    window.history.redo()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example("checkpoint-heads-not-dividing")
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example("three-tokens")
    assert window.matrices.tab_names()[0] == "Q"
    assert mismatches == []


def test_a_session_longer_than_the_slider_shows_its_true_length(qtbot, window):  # noqa: F811
    from attention_explorer.session.resize import set_token_count

    long = set_token_count(window.session.data(), 5000)  # a file may hold up to 16384
    with qtbot.waitSignal(window.live.updated, timeout=20000):
        window.session.load(long)
    slider = window.controls.tokens
    assert slider.value() == 5000 and slider.maximum() == 5000
    assert window.status.size_label.text().startswith("5000×5000 tokens")  # the same count
    with qtbot.waitSignal(window.live.updated, timeout=20000):
        slider.setValue(300)  # back within the slider's own range
    assert len(window.session.tokens) == 300 and slider.maximum() == 4096
