"""compute_session(): the one way a session goes through the engine.

The window (ui/state/live_trace.py), the command line, the Python API, the self-test, both
benchmarks and the example generator all call it, so the backend and device rules (``cuda``
means ``cuda:0``; a device needs torch) are read here, by the one backend parser
(:func:`attention_explorer.engine.backend.resolve_backend`, re-exported here). Qt-free.
"""

from __future__ import annotations

from collections.abc import Iterable

from attention_explorer.engine import Backend, Trace, compute
from attention_explorer.engine.backend import BACKENDS, resolve_backend
from attention_explorer.engine.cache import EngineCache

__all__ = ["BACKENDS", "compute_session", "resolve_backend"]


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
