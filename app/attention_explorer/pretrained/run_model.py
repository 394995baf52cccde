"""The model run: the text through every layer to the model's output, with any layer's
attention replaced by an edited session and any head knocked out.

``model_run(model, text, edits={2: session}, knockout=[(4, 7)])`` returns a :class:`ModelRun`.
An edited layer's attention block is the session computed by the engine (whatever was
changed in it: X, W_Q…W_O, Q/K/V, the mask, temperature, normaliser); the residual stream
around it is the model's own hidden state. Given ``reuse=`` an earlier run of the same model
and text, the layers before the first one whose edit or knockout changed are taken from it,
so an edit in layer L recomputes from L only.

``backend="torch"`` (or ``"torch:cuda:0"``) runs the same forward pass on torch tensors
(:mod:`~attention_explorer.pretrained.torch_weights`, ``torch_host``): torch's fused,
multithreaded kernels, on the cpu or a GPU. An edited layer is computed by the engine's
``compute()`` on that backend. The run's arrays come back as numpy.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from attention_explorer.engine import AttentionInputError, Backend
from attention_explorer.engine.backend import ArrayLib
from attention_explorer.engine.blas_threads import blas_threads
from attention_explorer.pretrained.checkpoint.text_limits import check_text_length
from attention_explorer.pretrained.checkpoint.tokenize import check_type_ids
from attention_explorer.pretrained.checkpoint.weights import ModelWeights, in_dtype
from attention_explorer.pretrained.forward import (
    attention_input,
    embed,
    output_logits,
    rest_of_layer,
)
from attention_explorer.pretrained.kernel import attend, attend_engine
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.open_model import LoadedModel, load_model, model_backend
from attention_explorer.pretrained.output import RunOutputs
from attention_explorer.pretrained.run_checks import (
    check_device,
    check_edits,
    check_knockout,
    check_threads,
)
from attention_explorer.session.document import SessionData

DTYPES = ("float32", "float64")


@dataclass(frozen=True, eq=False)
class ModelRun(RunOutputs):
    """One run of a model on a text.

    ``attentions [layers, heads, n, n]``; ``hidden [layers + 1, n, d]``: the residual stream
    after the embeddings and after each layer (before any final norm); ``logits [n, vocab]``
    or None when the checkpoint has no output head. ``recomputed_from`` is the first layer
    this call computed (earlier ones came from ``reuse``).
    """

    model: LoadedModel
    text: str
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    attentions: np.ndarray  # [layers, heads, n, n]
    hidden: np.ndarray  # [layers + 1, n, d]
    logits: np.ndarray | None  # [n, vocab]
    edits: Mapping[int, SessionData] = field(default_factory=dict)
    knockout: tuple[tuple[int, int], ...] = ()
    dtype: str = "float32"
    backend: str = "numpy"
    recomputed_from: int = 0
    signatures: tuple[str, ...] = ()

    @property
    def n_layers(self) -> int:
        """Number of layers."""
        return int(self.attentions.shape[0])

    @property
    def n_heads(self) -> int:
        """Heads per layer."""
        return int(self.attentions.shape[1])


@lru_cache(maxsize=8)
def _multipliers(size: int) -> np.ndarray:
    """``size`` fixed random odd 64-bit integers (the keys of :func:`_digest`'s hash)."""
    return np.random.default_rng(size).integers(0, 2**63, size, dtype=np.uint64) * 2 + 1


def _fingerprint(a) -> int:
    """A 64-bit hash of an array's values: ``sum(bits_i * odd_i) mod 2**64``. Changing any
    one value always changes it (an odd multiplier is invertible mod 2**64); several changes
    collide with probability 2**-64. A copy-free pass, far cheaper than a byte hash."""
    bits = np.ascontiguousarray(a, dtype=np.float64).reshape(-1).view(np.uint64)  # [size]
    return int(np.dot(bits, _multipliers(bits.size)))  # uint64 arithmetic wraps mod 2**64


def _digest(session: SessionData) -> str:
    """What an edit is: the session's settings and a fingerprint of every input array."""
    parts = [json.dumps(session.config.to_dict(), sort_keys=True, default=str)]
    for name in ("X", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O", "Q", "K", "V"):
        value = getattr(session.inputs, name, None)
        if value is not None:
            parts.append(f"{name}{np.shape(value)}:{_fingerprint(value):x}")
    return hashlib.blake2b("|".join(parts).encode(), digest_size=16).hexdigest()


#: The BLAS threads of a run beside the window: on 2 busy cores a MiniLM run took 432 ms at
#: 13 tokens with the default threads and 21 ms with one; 318 / 82 ms at 244 tokens.
WINDOW_THREADS = 1


def _weights(loaded: LoadedModel, dtype: str, engine: Backend | None = None) -> ModelWeights:
    """The model's weights read as ``dtype`` (straight from the checkpoint, never through a
    float64 copy), as torch tensors on the engine's device when ``engine`` is torch; kept
    with the model."""
    if dtype not in loaded.cast:
        loaded.cast[dtype] = in_dtype(loaded.weights, dtype)
    if engine is None or engine.name != "torch":
        return loaded.cast[dtype]
    key = ("torch", dtype, engine.device)
    if key not in loaded.cast:
        from attention_explorer.pretrained.torch_weights import on_torch

        loaded.cast[key] = on_torch(loaded.cast[dtype], engine.device)
    return loaded.cast[key]


def _host(x) -> np.ndarray | None:
    """A run's array as numpy (a torch tensor is brought to the cpu); None stays None."""
    if x is None or isinstance(x, np.ndarray):
        return x
    return x.detach().cpu().numpy()


def _reusable(reuse, loaded, ids, dtype, backend, signatures) -> int:
    """How many leading layers of ``reuse`` this run can take unchanged."""
    if not isinstance(reuse, ModelRun) or reuse.model is not loaded or reuse.ids != ids:
        return 0
    if (reuse.dtype, reuse.backend) != (dtype, backend):
        return 0
    same = 0
    while same < len(signatures) and reuse.signatures[same] == signatures[same]:
        same += 1
    return same


@dataclass
class _Plan:
    w: ModelWeights
    edits: dict
    knocked: dict
    backend: object
    dtype: str
    signatures: tuple[str, ...]
    base: Callable[[], ModelRun]  # the run with no edits and no knockouts (computed lazily)

    def array(self, values) -> np.ndarray:
        """``values`` (numpy) as the run's arrays: numpy in the run's dtype, or a tensor on
        the torch run's device."""
        values = np.asarray(values, dtype=self.dtype)
        if self.w.library == "numpy":
            return values
        from attention_explorer.pretrained.torch_weights import tensor

        return tensor(values, self.backend.device)

    def on_gpu(self) -> bool:
        """True when the run computes on a GPU (torch on a device other than the cpu)."""
        return self.w.library == "torch" and self.backend.device != "cpu"

    def buffer(self, shape: tuple[int, ...]) -> np.ndarray:
        """An empty numpy array for results; on a GPU in pinned host memory, which copies
        from the GPU fill while the next layer computes."""
        if not self.on_gpu():
            return np.empty(shape, dtype=self.dtype)
        from attention_explorer.pretrained.torch_host import host_array

        return host_array(shape, self.dtype)

    def put(self, into: np.ndarray, value) -> None:
        """``value`` (numpy, or a tensor) into the result array ``into``; call :meth:`wait`
        before reading it."""
        if value is into:
            return
        if isinstance(value, np.ndarray):
            into[...] = value
            return
        from attention_explorer.pretrained.torch_host import copy_to_host

        copy_to_host(into, value)

    def wait(self) -> None:
        """Wait for the copies :meth:`put` queued on a GPU."""
        if self.on_gpu():
            from attention_explorer.pretrained.torch_host import wait

            wait(self.backend.device)

    def edited_inputs(self, layer: int, session: SessionData, h: np.ndarray):
        """The session's inputs, its X moved by whatever changed upstream: ``X = x_run +
        (session.X - x_original)``, so an edit of X is kept and an earlier edit or knockout
        still reaches this layer. With nothing changed upstream, the session's X as it is."""
        if session.inputs.X is None or not any(self.signatures[:layer]):
            return session.inputs
        x_run = _host(attention_input(self.w, layer, h))  # [n, d]
        base = self.array(self.base().hidden[layer])  # [n, d]
        x_original = _host(attention_input(self.w, layer, base))  # [n, d]
        delta = np.asarray(session.inputs.X, dtype=np.float64) - x_original
        return replace(session.inputs, X=x_run + delta)

    def layer(self, layer: int, h: np.ndarray, out: np.ndarray):
        """Layer ``layer`` on ``h [n, d]``: its weights ``[heads, n, n]`` (in ``out`` when
        computed here) and the new ``h`` (numpy arrays, or tensors on torch)."""
        knocked = self.knocked.get(layer, ())
        session = self.edits.get(layer)
        engine = None if self.backend.name == "numpy" else self.backend
        if session is not None:
            inputs = self.edited_inputs(layer, session, h)
            p, a = attend_engine(session.config, inputs, engine, self.dtype, knocked)
            a = self.array(a)
        else:  # numpy's kernel, or torch's (ArrayLib refused any other backend)
            x = attention_input(self.w, layer, h)  # [n, d]
            p, a = attend(self.w, layer, x, knocked, out)
        return p, rest_of_layer(self.w, layer, h, a)


def _base_run(loaded: LoadedModel, text: str, backend: str, dtype: str, threads: int | None):
    """A function giving the unedited run of ``text`` (kept: the 4 latest per model)."""

    def base() -> ModelRun:
        key = ("base", text, backend, dtype)
        if key not in loaded.cast:
            for old in [k for k in list(loaded.cast) if k[0] == "base"][:-3]:
                loaded.cast.pop(old, None)  # another thread may have taken it
            loaded.cast[key] = model_run(
                loaded, text, backend=backend, dtype=dtype, threads=threads
            )
        return loaded.cast[key]

    return base


def model_run(
    model: str | os.PathLike | LoadedModel,
    text: str,
    edits: Mapping[int, SessionData] | None = None,
    knockout: Iterable[tuple[int, int]] | None = None,
    backend: str = "numpy",
    dtype: str = "float32",
    reuse: ModelRun | None = None,
    progress: Callable[[int, int], None] | None = None,
    logits: bool = True,
    threads: int | None = None,
) -> ModelRun:
    """Run ``text`` through every layer of ``model`` to its output; see the module docstring.

    ``edits`` maps a layer to a session (from ``from_model``, then edited); ``knockout`` lists
    (layer, head) pairs whose heads contribute nothing to concat·W_O. ``dtype`` is float32
    (fast) or float64 (parity with transformers). ``progress(done, layers)`` is called after
    each computed layer. ``logits=False`` skips the output head (``logits`` is None): the
    overview needs only the attentions, and a large vocabulary's head is a large part of a
    run. ``threads`` caps the BLAS (and torch) threads: None uses every core, which is
    fastest for a run alone (a script, the command line); the window passes 1, since beside
    a busy GUI several threads wait on each other (see :data:`WINDOW_THREADS`). Raises
    :class:`ModelError` with one clear message for any problem.
    """
    if dtype not in DTYPES:
        raise ModelError("dtype", f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    check_threads(threads)
    check_text_length(model, text)  # the quick bound every entry runs before tokenizing
    loaded = load_model(model)
    toks = loaded.tokenize(text)
    engine = model_backend(backend)
    check_device(engine)
    try:
        ArrayLib(engine, dtype)  # torch installed, the device usable: else a clear message
    except AttentionInputError as exc:
        raise ModelError("backend", str(exc)) from None
    w = _weights(loaded, dtype, engine)
    if loaded.weights.token_type is not None:  # an id beyond the table: one line, not IndexError
        rows = int(loaded.weights.token_type.shape[0])
        check_type_ids(toks.type_ids, rows, "the checkpoint's token type table")
    n = len(toks.ids)
    knocked = check_knockout(w, loaded.name, knockout)
    edit_map = check_edits(w, loaded.name, edits, n)
    signatures = tuple(
        f"{knocked.get(i, ()) or ''}{_digest(edit_map[i]) if i in edit_map else ''}"
        for i in range(w.n_layers)
    )
    base = _base_run(loaded, text, backend, dtype, threads) if (edit_map or knocked) else None
    plan = _Plan(w, edit_map, knocked, engine, dtype, signatures, base)
    start = _reusable(reuse, loaded, toks.ids, dtype, backend, signatures)
    attentions = plan.buffer((w.n_layers, w.heads, n, n))
    hidden = plan.buffer((w.n_layers + 1, n, w.d_model))
    try:
        with blas_threads(threads):
            if start:
                attentions[:start] = reuse.attentions[:start]
                hidden[: start + 1] = reuse.hidden[: start + 1]
                h = plan.array(hidden[start])  # [n, d]
            else:
                h = embed(w, toks.ids, toks.type_ids, np.dtype(dtype))  # [n, d]
                plan.put(hidden[0], h)
            for layer in range(start, w.n_layers):
                p, h = plan.layer(layer, h, attentions[layer])
                plan.put(hidden[layer + 1], h)
                plan.put(attentions[layer], p)
                if progress is not None:
                    progress(layer + 1, w.n_layers)
            reused = start == w.n_layers and reuse.logits is not None
            head = reuse.logits if reused else _host(output_logits(w, h)) if logits else None
            plan.wait()
    except AttentionInputError as exc:  # an edited layer's session refused by the engine
        raise ModelError("backend", str(exc)) from None
    return ModelRun(
        model=loaded,
        text=text,
        tokens=toks.tokens,
        ids=toks.ids,
        attentions=attentions,
        hidden=hidden,
        logits=head,
        edits=edit_map,
        knockout=tuple(sorted((ly, hd) for ly, heads in knocked.items() for hd in heads)),
        dtype=dtype,
        backend=str(backend),
        recomputed_from=start,
        signatures=signatures,
    )
