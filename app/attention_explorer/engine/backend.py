"""Array backends: numpy always; torch (cpu, cuda, mps) only when asked for.

torch is never imported at module import time, so the default app starts fast and the
packaged build without torch works.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass

from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.kernels import ops_for

DTYPES = ("float32", "float64")
#: The backends' names.
BACKENDS = ("numpy", "torch")


@dataclass(frozen=True)
class Backend:
    """Which library and device run the engine: ``Backend("torch", "cuda:0")``."""

    name: str = "numpy"
    device: str = "cpu"

    @property
    def label(self) -> str:
        """A short human name, e.g. ``numpy`` or ``torch cuda:0``."""
        return self.name if self.name == "numpy" else f"{self.name} {self.device}"

    @property
    def spec(self) -> str:
        """The one-string spelling the model API reads back: ``numpy`` or ``torch:cuda:0``."""
        return self.name if self.name == "numpy" else f"{self.name}:{self.device}"


def resolve_backend(backend: str | Backend = "numpy", device: str = "cpu") -> Backend:
    """The one backend parser: the :class:`Backend` for a name and device, or
    AttentionInputError saying why not.

    ``backend`` is a name (``numpy``, ``torch``), the one-string spelling ``torch:cuda:0``
    (:attr:`Backend.spec`; its device wins over ``device``) or a :class:`Backend` (which
    brings its own device). ``cuda`` means ``cuda:0``. A device other than ``cpu`` needs the
    torch backend, and torch needs to be installed; both are refused with a message naming
    the fix, never ignored.
    """
    if isinstance(backend, Backend):
        backend, device = backend.name, backend.device
    name, _, spelled = str(backend).partition(":")
    device = (spelled or device or "cpu").strip()
    if name not in BACKENDS:
        raise AttentionInputError("backend", f"{backend!r} is not one of {', '.join(BACKENDS)}")
    if name == "numpy":
        if device != "cpu":
            raise AttentionInputError(
                "device",
                f"{device!r} needs the torch backend (numpy runs on the cpu only); "
                "choose backend torch or device cpu",
            )
        return Backend("numpy", "cpu")
    if not torch_installed():
        raise AttentionInputError("backend", torch_missing_reason())
    device = "cuda:0" if device == "cuda" else device
    if not re.fullmatch(r"cpu|mps|cuda:\d+", device):  # meta, xpu…: nothing we can run on
        raise AttentionInputError(
            "device",
            f"{device!r} is not a device torch can compute on here; choose cpu, cuda:N or mps",
        )
    return Backend("torch", device)


def torch_installed() -> bool:
    """True when torch can be imported (without importing it)."""
    return importlib.util.find_spec("torch") is not None


def torch_missing_reason() -> str:
    """Why torch cannot be used here, and what to do: a packaged build says it has no torch."""
    if getattr(sys, "frozen", False):
        return (
            "this packaged build has no torch; the numpy engine computes everything, or build"
            " it with torch (packaging/build.py --with-torch) or install the Python package"
        )
    return "torch is not installed here; install it (pip install torch) or use numpy"


def extremes_for(backend: Backend):
    """How a pass on ``backend`` reads an input array's (smallest, largest) value: numpy's
    ``min`` and ``max`` (two passes), or for torch one multithreaded ``aminmax`` over the
    same memory (no copy, float64 kept). At n = 256 the inputs' checks took 0.7 ms of a
    7.6 ms torch pass with numpy's two passes (``diagnostics/bench.py``)."""
    from attention_explorer.engine.inputs import numpy_extremes

    torch = sys.modules.get("torch") if backend.name == "torch" else None
    if torch is None:
        return numpy_extremes

    def torch_extremes(array):
        if not (array.flags.writeable and array.dtype.kind == "f" and array.dtype.isnative):
            return numpy_extremes(array)  # torch shares only writable native float memory
        try:
            low, high = torch.from_numpy(array).aminmax()
        except (TypeError, ValueError, RuntimeError):  # e.g. negative strides
            return numpy_extremes(array)
        return float(low), float(high)

    return torch_extremes


def available_backends() -> list[Backend]:
    """Every backend and device usable here: numpy first, then torch cpu, cuda:N, mps.

    Imports torch (slow, once) only when it is installed.
    """
    found = [Backend("numpy", "cpu")]
    if not torch_installed():
        return found
    try:
        torch = importlib.import_module("torch")
    except Exception:  # a broken torch install must not take the app down
        return found
    found.append(Backend("torch", "cpu"))
    if torch.cuda.is_available():
        found.extend(Backend("torch", f"cuda:{i}") for i in range(torch.cuda.device_count()))
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append(Backend("torch", "mps"))
    return found


class ArrayLib:
    """The namespace, dtype and device one compute call runs with.

    ``xp`` is an array-API namespace (array_api_compat's numpy or torch wrapper), so the
    engine writes each formula once.
    """

    def __init__(self, backend: Backend, dtype: str = "float32"):
        if dtype not in DTYPES:
            raise AttentionInputError("dtype", f"{dtype!r} is not one of {', '.join(DTYPES)}")
        self.backend = backend
        self.dtype_name = dtype  #: "float32" or "float64", whatever the backend
        if backend.name == "numpy":
            if backend.device != "cpu":
                raise AttentionInputError("device", "numpy runs on the cpu only")
            import numpy as np
            from array_api_compat import numpy as xp

            self.xp = xp
            self.dtype = getattr(np, dtype)
            self.device = "cpu"
        elif backend.name == "torch":
            if not torch_installed():
                raise AttentionInputError("backend", torch_missing_reason())
            torch = importlib.import_module("torch")
            from array_api_compat import torch as xp

            self.xp = xp
            self.dtype = getattr(torch, dtype)
            if backend.device == "mps" and dtype == "float64":
                raise AttentionInputError("dtype", "Apple's mps device has no float64; use float32")
            try:
                self.device = torch.device(backend.device)
                if self.device.type != "cpu":  # the cpu is always there: no probe
                    torch.empty(0, device=self.device)
            except Exception as exc:
                raise AttentionInputError(
                    "device", f"torch cannot use device {backend.device!r} here ({exc})"
                ) from None
        else:
            raise AttentionInputError("backend", f"{backend.name!r} is not one of numpy, torch")
        self.ops = ops_for(backend.name)  #: the primitives (:mod:`attention_explorer.kernels`)

    def asarray(self, values):
        """Move a numpy array (or nested list) onto this backend's device and dtype."""
        return self.xp.asarray(values, dtype=self.dtype, device=self.device)

    def asbool(self, values):
        """A boolean array on this backend's device (torch gets its own copy of a read-only
        numpy array, such as the shared mask: it may not share one)."""
        flags = getattr(values, "flags", None)
        if self.backend.name == "torch" and flags is not None and not flags.writeable:
            values = values.copy()
        return self.xp.asarray(values, dtype=self.xp.bool, device=self.device)

    @staticmethod
    def to_numpy(array):
        """Any backend's array as a numpy array (copied off a GPU when needed)."""
        import numpy as np

        if array is None:
            return None
        if hasattr(array, "detach"):
            return array.detach().cpu().numpy()
        return np.asarray(array)
