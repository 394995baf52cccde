"""Model > Latent stages… in the real window on a tiny DeepSeek-V3 (multi-head latent
attention): the maps hold ``latent_view``'s numbers (c_kv, the shared rotary key, the
selected head's up-projected k_nope and V, K = [k_nope ; k_pe]) with numbers written in the
cells, the cache sentence prices the latent against multi-head attention with
``cache_size``'s numbers, the up-projected maps follow the selected head, a reopened layer
is recomputed, and a model without latent attention has no such entry."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QObject

import attention_explorer as ae
from attention_explorer.pretrained.latent.view import latent_view
from attention_explorer.ui.model.model_install import menu_named
from tests.ui.model_folders import gpt2_folder, load, model_window, open_head  # noqa: F401

pytest.importorskip("transformers")
TEXT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def deepseek(tmp_path_factory):
    """The tiny DeepSeek-V3 of test_deepseek_v3 (4 heads, kv_lora 16, rope 8, nope 8, v 12)."""
    from tests.models.test_deepseek_v3 import make_deepseek

    return make_deepseek(tmp_path_factory.mktemp("deepseek-latent-ui"))


def _launcher(window):
    launcher = window.findChild(QObject, "latent_launcher")
    assert launcher is not None, "Model > Latent stages… is not installed"
    return launcher


def _image(dialog, name):
    frame = dialog.maps[name].frame
    assert frame is not None, name
    return np.asarray(frame.image, dtype=np.float64)


def test_the_maps_hold_the_latent_stages_and_follow_the_head(
    qtbot,
    model_window,  # noqa: F811
    deepseek,
):
    window = model_window
    load(qtbot, window, deepseek)
    launcher = _launcher(window)
    assert launcher.action.isVisible()
    assert launcher.action in menu_named(window, "&Model").actions()
    open_head(qtbot, window, 1, 2)
    assert "Model > Latent stages…" in window.status.bar.currentMessage()
    launcher.action.trigger()
    dialog = launcher.dialog
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    qtbot.waitUntil(lambda: dialog.view is not None and dialog.view.layer == 1, timeout=60000)
    want = latent_view(deepseek, TEXT, 1)
    assert dialog.head_spin.value() == 2
    np.testing.assert_allclose(_image(dialog, "c_kv"), want.c_kv, atol=1e-12)  # [n, 16]
    np.testing.assert_allclose(_image(dialog, "k_pe"), want.k_pe, atol=1e-12)  # [n, 8]
    np.testing.assert_allclose(_image(dialog, "key")[:, :8], want.k_nope[2], atol=1e-12)
    np.testing.assert_allclose(dialog.frames.frames["k_nope"].image, want.k_nope[2], atol=1e-12)
    np.testing.assert_allclose(_image(dialog, "value"), want.value[2], atol=1e-12)
    key = np.concatenate([want.k_nope[2], want.k_pe], axis=1)  # [n, nope + rope]
    np.testing.assert_allclose(_image(dialog, "key"), key, atol=1e-12)
    np.testing.assert_allclose(_image(dialog, "key"), want.key[2], atol=1e-12)
    frame = dialog.maps["key"].frame
    assert list(frame.row_labels) == list(want.tokens)
    assert list(frame.col_labels) == [f"n{i}" for i in range(8)] + [f"r{i}" for i in range(8)]
    assert dialog.maps["k_pe"].texts.drawn()  # the numbers are written where they fit
    # the cache sentence: cache_size's latent and multi-head bytes per token
    size = ae.cache_size(deepseek, "float32")
    words = dialog.bytes_label.text()
    assert f"{size.own.per_layer:,} bytes per layer" in words
    assert f"{size.mha.per_layer:,} bytes per layer" in words
    assert "16 latent + 8 rotary key" in words

    window.session.selected_head = 0  # the explorer's head: the up-projected maps follow
    qtbot.waitUntil(lambda: dialog.head_spin.value() == 0, timeout=5000)
    np.testing.assert_allclose(_image(dialog, "key")[:, :8], want.k_nope[0], atol=1e-12)
    np.testing.assert_allclose(_image(dialog, "key")[:, 8:], want.k_pe, atol=1e-12)
    np.testing.assert_allclose(_image(dialog, "value"), want.value[0], atol=1e-12)
    assert not np.allclose(want.k_nope[0], want.k_nope[2])
    np.testing.assert_allclose(_image(dialog, "c_kv"), want.c_kv, atol=1e-12)  # shared

    open_head(qtbot, window, 0, 1)  # another layer opened: recomputed for it
    qtbot.waitUntil(lambda: dialog.view is not None and dialog.view.layer == 0, timeout=60000)
    qtbot.waitUntil(lambda: dialog.head_spin.value() == 1, timeout=5000)
    first = latent_view(deepseek, TEXT, 0)
    np.testing.assert_allclose(_image(dialog, "c_kv"), first.c_kv, atol=1e-12)
    np.testing.assert_allclose(_image(dialog, "key")[:, :8], first.k_nope[1], atol=1e-12)
    assert "layer 0" in dialog.windowTitle()

    V = np.array(window.session.inputs.V, dtype=np.float64)  # [heads, n, v_dim]
    V[1, 0, 0] += 3.0
    with window.history.transaction("Edit V"):
        window.session.inputs = window.session.inputs.with_array("V", V)
    qtbot.waitUntil(lambda: dialog.edit_note.isVisibleTo(dialog), timeout=5000)
    assert "model's own numbers" in dialog.edit_note.text()


def test_a_model_without_latent_attention_has_no_latent_stages(
    qtbot,
    model_window,  # noqa: F811
    gpt2_folder,  # noqa: F811
    deepseek,
):
    window = model_window
    launcher = _launcher(window)
    assert not launcher.action.isVisible()  # nothing loaded
    assert launcher.show() is None and launcher.dialog is None
    load(qtbot, window, deepseek)
    dialog = launcher.show()
    assert dialog is not None and dialog.isVisible()
    load(qtbot, window, gpt2_folder)  # another model: no latent, the entry and window go
    assert not launcher.action.isVisible()
    assert not dialog.isVisible()
    assert launcher.show() is None
