"""PySide6-Essentials 6.12.0 on Python 3.11 drops a reference to True on every Signal.emit().

After ~2,000 emits of a bool the refcount of True reaches zero and the process aborts with
"Fatal Python error: bool_dealloc". The emits run in a subprocess, so such an abort fails
this test instead of killing pytest.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap

import pytest

EMITS = 5_000
#: True's refcount may move a little for unrelated reasons; the bug loses one per emit.
SLACK = 50

SCRIPT = textwrap.dedent(
    f"""
    import sys
    from PySide6.QtCore import QCoreApplication, QObject, Signal

    class Sender(QObject):
        toggled = Signal(bool)

    app = QCoreApplication.instance() or QCoreApplication([])
    received = []
    sender = Sender()
    sender.toggled.connect(lambda value: received.append(value))
    before = sys.getrefcount(True)
    for _ in range({EMITS}):
        sender.toggled.emit(True)
    after = sys.getrefcount(True)
    received_true = sum(1 for value in received if value is True)
    del received
    print(before, after, received_true, flush=True)
    """
)


def test_installed_pyside_is_not_the_broken_release():
    version = importlib.metadata.version("PySide6-Essentials")
    assert version != "6.12.0", "PySide6-Essentials 6.12.0 aborts after ~2,000 Signal.emit()"


def test_many_bool_emits_keep_true_alive():
    pytest.importorskip("PySide6")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, (
        f"the emitting process died (exit {done.returncode}); stderr:\n{done.stderr[-2000:]}"
    )
    before, after, received = (int(x) for x in done.stdout.split())
    assert received == EMITS, "the slot did not receive every emit"
    # the slot's list held EMITS extra references while `after` was read
    assert after - EMITS >= before - SLACK, f"True lost {before - (after - EMITS)} references"
