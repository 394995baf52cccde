"""The Positions box works in direct mode too, offering only what the engine accepts there:
RoPE (it turns the typed q and k) and none; the tables added to X are greyed out with the
engine's reason."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from attention_explorer.session import History, Session, resize, starter_session  # noqa: E402
from attention_explorer.ui.editing.controls_panel import ControlsPanel  # noqa: E402


def _panel(qtbot, mode: str):
    data = starter_session()
    session = Session.from_data(resize.set_mode(data, mode))
    panel = ControlsPanel(session, History(session))
    qtbot.addWidget(panel)
    return session, panel


def _offered(combo) -> dict[str, bool]:
    model = combo.model()
    return {combo.itemData(i): model.item(i).isEnabled() for i in range(combo.count())}


def test_direct_mode_offers_rope_and_none_and_choosing_rope_sets_it(qtbot):
    session, panel = _panel(qtbot, "direct")
    combo = panel.positional
    assert session.config.mode == "direct" and combo.isEnabled()
    assert _offered(combo) == {"none": True, "sinusoidal": False, "learned": False, "rope": True}
    tip = combo.model().item(combo.findData("sinusoidal")).toolTip()
    assert "direct mode" in tip and "'rope'" in tip  # the engine's own reason
    combo.setCurrentIndex(combo.findData("rope"))
    assert session.config.positional == "rope" and session.config.mode == "direct"
    assert panel.error.text() == ""
    combo.setCurrentIndex(combo.findData("none"))
    assert session.config.positional == "none"


def test_projection_mode_offers_every_encoding_and_direct_mode_greys_them_again(qtbot):
    session, panel = _panel(qtbot, "projection")
    combo = panel.positional
    assert all(_offered(combo).values())
    combo.setCurrentIndex(combo.findData("sinusoidal"))
    assert session.config.positional == "sinusoidal"
    panel.mode.setCurrentIndex(panel.mode.findData("direct"))
    assert session.config.mode == "direct" and session.config.positional == "none"
    assert combo.currentData() == "none" and combo.isEnabled()
    assert not _offered(combo)["sinusoidal"] and _offered(combo)["rope"]
