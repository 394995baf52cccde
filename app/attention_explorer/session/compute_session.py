"""compute_session(): the one way a session goes through the engine.

The window (ui/state/live_trace.py), the command line, the Python API, the self-test, both
benchmarks and the example generator all call it, so the backend and device rules (``cuda``
means ``cuda:0``; a device needs torch) live here only. Qt-free.
"""

from __future__ import annotations

from collections.abc import Iterable

from attention_explorer.engine import (
    AttentionInputError,
    Backend,
    Trace,
    compute,
    torch_installed,
    torch_missing_reason,
)
from attention_explorer.engine.cache import EngineCache

BACKENDS = ("numpy", "torch")


def resolve_backend(backend: str | Backend = "numpy", device: str = "cpu") -> Backend:
    """The :class:`Backend` for a backend name and device, or AttentionInputError saying why not.

    ``cuda`` means ``cuda:0``. A device other than ``cpu`` needs the torch backend, and torch
    needs to be installed; both are refused with a message naming the fix, never ignored.
    A :class:`Backend` passed in brings its own device (``device`` is then ignored).
    """
    if isinstance(backend, Backend):
        backend, device = backend.name, backend.device
    if backend not in BACKENDS:
        raise AttentionInputError("backend", f"{backend!r} is not one of {', '.join(BACKENDS)}")
    device = (device or "cpu").strip()
    if backend == "numpy":
        if device != "cpu":
            raise AttentionInputError(
                "device",
                f"{device!r} needs the torch backend (numpy runs on the cpu only); "
                "choose backend torch or device cpu",
            )
        return Backend("numpy", "cpu")
    if not torch_installed():
        raise AttentionInputError("backend", torch_missing_reason())
    return Backend("torch", "cuda:0" if device == "cuda" else device)


def compute_session(
    data,
    backend: str | Backend = "numpy",
    device: str = "cpu",
    dtype: str = "float32",
    heads: Iterable[int] | None = None,
    stages: Iterable[str] | None = None,
    preview: int | None = None,
    cache: EngineCache | None = None,
) -> Trace:
    """Run a session through the engine and return its :class:`Trace` (numpy stages).

    ``data`` is a :class:`~attention_explorer.session.SessionData` or an evented
    :class:`~attention_explorer.session.Session` (its current content is used). ``heads`` and
    ``stages`` limit what is computed and kept, ``preview`` makes long sequences keep their
    square stages at display resolution (see :func:`attention_explorer.engine.compute`);
    ``cache`` is the caller's :class:`~attention_explorer.engine.cache.EngineCache` (None: pure).
    Raises :class:`AttentionInputError` for an invalid session, backend, device or dtype.
    """
    if callable(getattr(data, "data", None)):  # an evented Session: take a snapshot
        data = data.data()
    return compute(
        data.inputs,
        data.config,
        backend=resolve_backend(backend, device),
        dtype=dtype,
        heads=heads,
        stages=stages,
        tokens=data.tokens,
        kv_tokens=data.kv_tokens or None,
        preview=preview,
        cache=cache,
    )
