"""A model run on torch hands its results back to numpy: the dtypes, pinned host buffers and
the copies. The arithmetic itself is :mod:`attention_explorer.kernels.torch_ops`, which
``forward.py`` and ``kernel.py`` reach through ``ops_for`` when the weights are torch tensors
(:func:`~attention_explorer.pretrained.torch_weights.on_torch`).

The run's results come back as numpy arrays: on a GPU, :func:`host_array` gives them pinned
host memory, so each layer's copy (:func:`copy_to_host`) runs while the next layer computes.

Imported only when a model run asks for ``backend="torch"``: the app without torch never
imports it.
"""

from __future__ import annotations

import numpy as np
import torch

#: numpy's dtype of each torch float dtype a run uses.
NUMPY_DTYPES = {torch.float32: np.float32, torch.float64: np.float64}


def host_array(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """An empty numpy array in pinned (page-locked) host memory: a GPU copies into it without
    the cpu waiting, several times faster than into ordinary memory. torch keeps freed pinned
    blocks for reuse, so a run's buffers cost an allocation only the first time."""
    return torch.empty(shape, dtype=getattr(torch, dtype), pin_memory=True).numpy()


def copy_to_host(into: np.ndarray, value: torch.Tensor) -> None:
    """``value`` copied into the numpy array ``into`` (same shape); from a GPU without
    waiting: call :func:`wait` before reading ``into``."""
    torch.from_numpy(into).copy_(value, non_blocking=value.device.type != "cpu")


def wait(device: str) -> None:
    """Wait until every copy and kernel queued on ``device`` is done (nothing on the cpu)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
