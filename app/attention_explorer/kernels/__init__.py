"""The maths primitives, one namespace per array library, used by the engine and by the
model's forward pass alike: :mod:`.numpy_ops` and :mod:`.torch_ops` (the same names),
:mod:`.tables` (position tables, made once in float64 for both) and :mod:`.portable`
(written once against the array API standard).

:func:`ops_for` picks the namespace of an array (array_api_compat's ``is_torch_array``, so
torch is imported only when a torch tensor exists) or of a library name. A new primitive is
one function in ``numpy_ops.py`` and one in ``torch_ops.py``, its name in ``names.PRIMITIVES``, and
one case in ``tests/kernels/test_primitives_parity.py``.

Imports only :mod:`attention_explorer.core` (nothing above): the engine and ``pretrained``
build on it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from array_api_compat import is_numpy_array, is_torch_array

#: The array libraries with a namespace here.
LIBRARIES = ("numpy", "torch")


def ops_for(array_or_library) -> ModuleType:
    """The primitives' namespace for ``array_or_library``: a numpy array or ``"numpy"`` give
    :mod:`.numpy_ops`, a torch tensor or ``"torch"`` give :mod:`.torch_ops` (imported then).
    Anything else is a TypeError (a library name not in :data:`LIBRARIES` a ValueError)."""
    if isinstance(array_or_library, str):
        if array_or_library not in LIBRARIES:
            raise ValueError(f"{array_or_library!r} is not one of {', '.join(LIBRARIES)}")
        return importlib.import_module(f"attention_explorer.kernels.{array_or_library}_ops")
    if is_torch_array(array_or_library):
        return ops_for("torch")
    if is_numpy_array(array_or_library):
        return ops_for("numpy")
    raise TypeError(f"no primitives for a {type(array_or_library).__name__}")
