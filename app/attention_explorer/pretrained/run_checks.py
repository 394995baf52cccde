"""The model run's argument checks (:func:`~.run_model.model_run`): threads, knocked-out
heads, the torch device, edited layers' sessions. Each refusal is one ModelError naming what
is wrong and what the model has."""

from __future__ import annotations

import re

import numpy as np

from attention_explorer.engine import Backend
from attention_explorer.pretrained.checkpoint.weights import ModelWeights
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.session.document import SessionData


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_threads(threads) -> None:
    """A ModelError unless ``threads`` is None (every core) or a positive integer."""
    if threads is not None and not (_is_int(threads) and threads >= 1):
        raise ModelError(
            "threads", f"threads must be None (every core) or a whole number >= 1, not {threads!r}"
        )


def check_knockout(w: ModelWeights, name: str, knockout) -> dict[int, tuple[int, ...]]:
    """``knockout`` as {layer: heads}; a ModelError naming any head that does not exist."""
    by_layer: dict[int, set[int]] = {}
    for pair in knockout or ():
        ok = isinstance(pair, (tuple, list)) and len(pair) == 2 and all(map(_is_int, pair))
        layer, head = pair if ok else (-1, -1)
        if not (0 <= layer < w.n_layers and 0 <= head < w.heads):
            raise ModelError(
                "knockout",
                f"cannot knock out {pair!r}: {name} has layers 0..{w.n_layers - 1} and heads "
                f"0..{w.heads - 1}; give (layer, head) pairs",
            )
        by_layer.setdefault(int(layer), set()).add(int(head))
    return {layer: tuple(sorted(heads)) for layer, heads in by_layer.items()}


#: The torch devices a model can run on (``meta`` holds no numbers; others are not ours).
RUN_DEVICES = re.compile(r"cpu|mps|cuda(:\d+)?")


def check_device(engine: Backend) -> None:
    """A ModelError naming the choices when ``engine``'s torch device cannot compute a run
    (``torch:meta`` holds shapes, not numbers: torch said ``pin_memory`` failed)."""
    if engine.name == "torch" and not RUN_DEVICES.fullmatch(engine.device):
        raise ModelError(
            "backend",
            f"the torch device {engine.device!r} cannot run a model: choose torch (the cpu), "
            "torch:cuda:N (a GPU) or torch:mps (Apple)",
        )


def check_edits(w: ModelWeights, name: str, edits, n: int) -> dict[int, SessionData]:
    """``edits`` as {layer: session}; a ModelError for a layer out of range or a session that
    does not fit this model and text."""
    checked = {}
    for layer, session in dict(edits or {}).items():
        if not _is_int(layer):
            raise ModelError("edit", f"an edit's layer must be an integer, not {layer!r}")
        if not 0 <= layer < w.n_layers:
            raise ModelError(
                "edit", f"no layer {layer} to edit: {name} has layers 0..{w.n_layers - 1}"
            )
        if not isinstance(session, SessionData):
            raise ModelError("edit", f"the edit of layer {layer} must be a session (from_model)")
        if len(session.tokens) != n or session.config.d_model != w.d_model:
            raise ModelError(
                "edit",
                f"the session edited for layer {layer} has {len(session.tokens)} tokens and "
                f"d_model {session.config.d_model}; this run has {n} tokens and d_model "
                f"{w.d_model}: open the session from the same model and text",
            )
        if session.config.heads != w.heads:  # its weights fill this layer's [heads, n, n]
            raise ModelError(
                "edit",
                f"the session edited for layer {layer} has {session.config.heads} heads; layer "
                f"{layer} of {name} has {w.heads}: a model run keeps the layer's heads "
                "(knock heads out instead of removing them)",
            )
        checked[int(layer)] = session
    return checked
