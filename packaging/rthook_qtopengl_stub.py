"""PyInstaller runtime hook: a stand-in for PySide6.QtOpenGL, which the build leaves out (8.5 MB).

pyqtgraph imports PySide6.QtOpenGL at start-up only to define RawImageGLWidget, a widget this
app never creates (it draws with OpenGL off). If the real module is missing, importing it gives
a stub whose every attribute is a class that raises a clear error when used. The real module
wins whenever a build ships it.
"""

import importlib.abc
import importlib.machinery
import sys
import types

_NAME = "PySide6.QtOpenGL"


class _StubModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)

        class Missing:
            def __init__(self, *args, **kwargs):
                raise RuntimeError(f"{_NAME}.{attr}: OpenGL is not part of this build")

            def __getattr__(self, name):
                return Missing

        Missing.__name__ = attr
        return Missing


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return _StubModule(spec.name, "Stand-in: QtOpenGL is not part of this build.")

    def exec_module(self, module):
        pass


class _StubFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != _NAME:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                return spec
        return importlib.machinery.ModuleSpec(name, _StubLoader())


sys.meta_path.insert(0, _StubFinder())
