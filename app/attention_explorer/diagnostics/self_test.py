"""``attention-explorer --self-test``: check that this install (package or binary) works.

Runs a list of named checks and prints one ``ok`` or ``FAIL`` line for each::

    ok    version 0.1.0
    ok    example session: Starter: the cat sat down
    ...
    FAIL  export PNG: ImportError: No module named 'attention_explorer.exporting'

The window is built offscreen (``QT_QPA_PLATFORM=offscreen`` unless the caller set a platform),
user settings are redirected to a temporary folder, Qt's messages are captured, and anything
unexpected written to stderr or by Qt counts as a failure. Returns 0 only when every check passed.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

#: Qt messages that are harmless here (offscreen platform, containers without a session bus).
BENIGN_QT_MESSAGES = (
    "This plugin does not support propagateSizeHints()",
    "This plugin does not support raise()",
    "This plugin does not support grabbing the keyboard",
    "This plugin does not support setting window opacity",
    "QStandardPaths: XDG_RUNTIME_DIR not set",
    "QStandardPaths: runtime directory",
    "QStandardPaths: wrong permissions on runtime directory",
    "Could not register app ID",
    "qt.qpa.fonts: Populating font family aliases took",
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class CheckFailed(Exception):
    """A check found something wrong; the message says what."""


@dataclass
class SelfTest:
    """State shared by the checks: the app, window, example, trace and a scratch folder."""

    scratch: Path
    out: io.TextIOBase = field(default_factory=lambda: sys.stdout)
    app: object = None
    window: object = None
    data: object = None
    trace: object = None
    qt_messages: list[str] = field(default_factory=list)
    failures: int = 0

    def run(self, name: str, check: Callable[[SelfTest], str]) -> bool:
        """Run one check; print ``ok  name: detail`` or ``FAIL  name: reason``."""
        try:
            detail = check(self)
        except CheckFailed as exc:
            return self._report(False, name, str(exc))
        except Exception as exc:  # any unexpected error is a failure, never a crash
            where = traceback.extract_tb(exc.__traceback__)[-1]
            reason = f"{type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})"
            return self._report(False, name, reason)
        return self._report(True, name, detail)

    def _report(self, passed: bool, name: str, detail: str) -> bool:
        if not passed:
            self.failures += 1
        line = f"{'ok' if passed else 'FAIL':<5} {name}" + (f": {detail}" if detail else "")
        print(line, file=self.out, flush=True)
        return passed


def is_benign(message: str) -> bool:
    """True for Qt messages known to be harmless in a headless self-test."""
    return any(known in message for known in BENIGN_QT_MESSAGES)


def _install_qt_handler(state: SelfTest) -> None:
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    quiet = (QtMsgType.QtDebugMsg, QtMsgType.QtInfoMsg)

    def handler(kind, context, message):  # noqa: ARG001 - Qt's signature
        if kind not in quiet and not is_benign(message):
            state.qt_messages.append(f"{kind.name}: {message}")

    state._qt_handler = handler  # keep a reference while Qt holds it
    state._previous_qt_handler = qInstallMessageHandler(handler)


def _restore_qt_handler(state: SelfTest) -> None:
    from PySide6.QtCore import qInstallMessageHandler

    qInstallMessageHandler(getattr(state, "_previous_qt_handler", None))


# -- the checks, in order ---------------------------------------------------------------------
def check_version(state: SelfTest) -> str:
    """The package version is set (the one shown by --version and Help > About)."""
    from attention_explorer._version import __version__

    if not __version__ or __version__.count(".") < 1:
        raise CheckFailed(f"bad version {__version__!r}")
    frozen = " (binary)" if getattr(sys, "frozen", False) else ""
    return f"{__version__}{frozen}, Python {sys.version.split()[0]}"


def check_resources(state: SelfTest) -> str:
    """The icon and the colour maps the views use are shipped."""
    from importlib.resources import files

    root = files("attention_explorer.resources")
    icons = [name for name in ("icon.png", "icon.svg") if (root / name).is_file()]
    if not icons:
        raise CheckFailed("no icon.png or icon.svg in attention_explorer.resources")
    import pyqtgraph as pg

    cmap = pg.colormap.get("viridis")
    if cmap is None or len(cmap.getStops()[0]) < 2:
        raise CheckFailed("pyqtgraph's viridis colour map is missing")
    return f"{', '.join(icons)}, viridis"


def check_example(state: SelfTest) -> str:
    """A worked example loads (the first one shipped, else the starter session)."""
    try:
        from attention_explorer.session.examples import list_examples, load_example
    except ImportError:
        list_examples = None
    if list_examples is not None:
        examples = list(list_examples())
        if examples:
            state.data = load_example(examples[0].key)
            return f"{examples[0].key} ({len(examples)} examples shipped)"
    from attention_explorer.session import starter_session

    state.data = starter_session()
    return f"{state.data.name} (no worked examples found)"


def check_engine(state: SelfTest) -> str:
    """The numpy engine runs the example and every unmasked weight row sums to 1."""
    import numpy as np

    from attention_explorer.session.compute_session import compute_session

    data = _need(state.data, "no example session")
    state.trace = trace = compute_session(data, backend="numpy")
    if trace.config.normalizer != "softmax":
        return f"{len(trace.heads)} head(s), {trace.config.normalizer}: row sums not checked"
    rows = [i for i in range(trace.n_queries) if i not in trace.fully_masked_rows]
    worst = 0.0
    for head in trace.heads:
        weights = trace.stage("weights", head)
        if not np.all(np.isfinite(weights)):
            raise CheckFailed(f"head {head}: weights are not finite")
        sums = np.sum(weights[rows], axis=1, dtype=np.float64)
        worst = max(worst, float(np.max(np.abs(sums - 1.0), initial=0.0)))
    if worst > 1e-5:
        raise CheckFailed(f"a weight row sums to 1 {worst:+.2e}, not 1")
    return f"{len(trace.heads)} head(s), {len(rows)} rows sum to 1 (max error {worst:.1e})"


def check_application(state: SelfTest) -> str:
    """The QApplication starts on the chosen platform."""
    try:
        from attention_explorer.ui.window.app import create_application
    except ImportError:
        from PySide6.QtWidgets import QApplication

        def create_application():
            return QApplication.instance() or QApplication(sys.argv[:1])

    state.app = create_application()
    return state.app.platformName()


def check_window(state: SelfTest) -> str:
    """The main window builds on the example session and shows (offscreen)."""
    from PySide6.QtCore import QSettings

    from attention_explorer.session import Session
    from attention_explorer.ui.window.main_window import MainWindow

    _need(state.app, "no QApplication")
    session = Session.from_data(_need(state.data, "no example session"))
    settings = QSettings(str(state.scratch / "settings.ini"), QSettings.Format.IniFormat)
    try:
        window = MainWindow(session=session, settings=settings)
    except TypeError:  # a MainWindow without the settings argument
        window = MainWindow(session=session)
    state.window = window
    window.show()
    for _ in range(5):
        state.app.processEvents()
    if not window.isVisible():
        raise CheckFailed("the window did not show")
    return f"{window.windowTitle()!r}, {window.width()}x{window.height()}"


def check_export(state: SelfTest) -> str:
    """The weights of head 0 export as a PNG into a temporary folder."""
    from attention_explorer.exporting import export_stage

    trace = _need(state.trace, "no trace (the engine check failed)")
    _need(state.app, "no QApplication")
    path = state.scratch / "weights-head0.png"
    result = export_stage(trace, "weights", trace.heads[0], path)
    written = Path(result) if isinstance(result, (str, os.PathLike)) else path
    if not written.is_file():
        raise CheckFailed(f"{written.name} was not written")
    head = written.read_bytes()[:8]
    if head != PNG_MAGIC:
        raise CheckFailed(f"{written.name} is not a PNG (starts {head!r})")
    return f"{written.name}, {written.stat().st_size} bytes"


def check_torch(state: SelfTest) -> str:
    """Where torch is part of the install, its CPU engine matches numpy; else say it is absent.

    A build without torch is not a failure: the numpy engine serves it.
    """
    import numpy as np

    from attention_explorer.engine import torch_installed
    from attention_explorer.session.compute_session import compute_session

    if not torch_installed():
        return "not in this build (numpy engine only)"
    data = _need(state.data, "no example session")
    reference = _need(state.trace, "no numpy trace to compare with")
    trace = compute_session(data, backend="torch", device="cpu")
    for head in trace.heads:
        if not np.allclose(
            trace.stage("weights", head), reference.stage("weights", head), atol=1e-5
        ):
            raise CheckFailed(f"torch cpu weights of head {head} differ from numpy's")
    return "torch cpu matches numpy"


CHECKS: tuple[tuple[str, Callable[[SelfTest], str]], ...] = (
    ("version", check_version),
    ("resources", check_resources),
    ("example session", check_example),
    ("engine", check_engine),
    ("Qt application", check_application),
    ("main window", check_window),
    ("export PNG", check_export),
    ("torch backend", check_torch),
)


def _need(value, message: str):
    if value is None:
        raise CheckFailed(message)
    return value


def _close(state: SelfTest) -> None:
    if state.window is not None:
        state.window.close()
        state.window.deleteLater()
    if state.app is not None:
        state.app.processEvents()


def _prepare_environment(scratch: Path) -> None:
    """Headless platform unless one is chosen; settings go to ``scratch``, not the user's."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("XDG_RUNTIME_DIR", str(scratch))  # quiets QStandardPaths when unset
    from PySide6.QtCore import QSettings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(scratch))


def run_self_test(out: io.TextIOBase | None = None) -> int:
    """Run every check, print an ok/FAIL line for each and a summary; return the exit code.

    0 when all checks passed and nothing unexpected was written to stderr or by Qt, else 1.
    """
    out = out or sys.stdout
    with tempfile.TemporaryDirectory(prefix="attention-explorer-self-test-") as tmp:
        scratch = Path(tmp)
        state = SelfTest(scratch=scratch, out=out)
        try:
            os.chmod(scratch, 0o700)
            _prepare_environment(scratch)
            _install_qt_handler(state)
        except Exception as exc:
            print(f"FAIL  Qt: {type(exc).__name__}: {exc}", file=out)
            print("self-test FAILED: PySide6 cannot start", file=out)
            return 1
        with _captured_stderr(scratch / "stderr.txt") as captured:
            try:
                for name, check in CHECKS:
                    state.run(name, check)
                _close(state)
            finally:
                _restore_qt_handler(state)
        return _summarise(state, captured(), out)


@contextmanager
def _captured_stderr(path: Path) -> Iterator[Callable[[], str]]:
    """Collect everything written to stderr (Python's and the C libraries' file descriptor 2).

    Yields a function returning the text captured; usable once the block has ended.
    """
    python_stderr, buffer = sys.stderr, io.StringIO()
    sink = open(path, "w+b")  # noqa: SIM115 - closed below
    try:
        if python_stderr is not None:
            python_stderr.flush()
        saved_fd = os.dup(2)
        os.dup2(sink.fileno(), 2)
    except (OSError, ValueError):  # no usable fd 2 (a windowed Windows binary)
        saved_fd = None
    sys.stderr = buffer
    text: list[str] = []
    try:
        yield lambda: "".join(text)
    finally:
        sys.stderr = python_stderr
        if saved_fd is not None:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        sink.seek(0)
        text += [buffer.getvalue(), sink.read().decode("utf-8", "replace")]
        sink.close()


def _summarise(state: SelfTest, stderr_text: str, out: io.TextIOBase) -> int:
    stray = [line for line in stderr_text.splitlines() if line.strip()]
    if state.qt_messages:
        state._report(False, "Qt messages", f"{len(state.qt_messages)} unexpected")
        for message in state.qt_messages[:20]:
            print(f"      {message}", file=out)
    else:
        state._report(True, "Qt messages", "none unexpected")
    if stray:
        state._report(False, "error output", f"{len(stray)} unexpected line(s)")
        for line in stray[:20]:
            print(f"      {line}", file=out)
    total = len(CHECKS) + 1
    if state.failures or stray:
        print(f"self-test FAILED: {state.failures} of {total + bool(stray)} checks", file=out)
        return 1
    print(f"self-test passed: {total} checks ok", file=out)
    return 0
