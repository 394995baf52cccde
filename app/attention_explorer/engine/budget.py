"""The size budget: what a computation may ask for, checked before anything is allocated.

Fixed limits bound tokens, heads and widths; the estimated bytes of the trace (every per-head
[n, m] stage kept, plus the mask and the working chunk) must fit in half of the memory that
is available now (80% of MemAvailable on Linux). A refusal says what would fit.
"""

from __future__ import annotations

import os
from types import MappingProxyType

from attention_explorer.core.stages import CATALOGUE
from attention_explorer.engine.config import AttentionConfig
from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.engine.row_blocks import CHUNK_ELEMENTS
from attention_explorer.engine.trace import SQUARE_STAGES

MAX_TOKENS = 16_384
MAX_HEADS = 256
MAX_D_MODEL = 16_384
#: Share of the available memory a single trace may take.
MEMORY_SHARE = 0.8
#: Per-head [n, m] stages every full trace keeps (scores, scaled, masked, weights): the
#: catalogue's per-head stages with one cell per (query, key) shown always (a soft cap adds
#: its capped scores: :func:`square_stages_kept`).
SQUARE_STAGES_KEPT = sum(1 for name in SQUARE_STAGES if CATALOGUE[name].when == "always")


def square_stages_kept(config: AttentionConfig) -> int:
    """The per-head [n, m] stages a full trace of ``config`` keeps."""
    return SQUARE_STAGES_KEPT + (1 if config.softcap is not None else 0)


#: Bytes alive at once while computing: two float64 temporaries of a chunk.
WORKING_BYTES = CHUNK_ELEMENTS * 8 * 2
#: A trace of at most this many bytes is not checked against the free memory: reading it
#: (/proc/meminfo) costs about 0.1 ms, 3% of a whole pass at n = 256 on torch's cpu.
SMALL_TRACE_BYTES = 64 * 1024 * 1024

_ITEMSIZE = MappingProxyType({"float32": 4, "float64": 8})


def available_memory() -> int | None:
    """Bytes of memory free for a new allocation now (MemAvailable on Linux), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def trace_bytes(
    config: AttentionConfig,
    n_queries: int,
    n_keys: int,
    heads_kept: int,
    dtype: str = "float32",
    preview: int | None = None,
) -> int:
    """Estimated peak bytes of a trace keeping ``heads_kept`` heads' [n, m] stages (or, with
    a ``preview`` limit, their pictures of at most ``preview`` x ``preview`` cells)."""
    item = _ITEMSIZE.get(dtype, 8)
    cells = n_queries * n_keys  # one [n, m] matrix
    shown = cells if preview is None else min(cells, preview * preview)  # kept per stage
    square = heads_kept * square_stages_kept(config) * shown * item  # [s, n, m] x the stages
    mask = cells  # [n, m] bool
    dk, dv = config.head_dim, config.value_dim
    # RoPE and QK-norm each keep q and k again (before and after)
    dk *= 1 + (config.positional == "rope") + (config.qk_norm != "none")
    vectors = (n_queries + n_keys) * (config.heads * (dk + dv) + 2 * config.d_model) * item
    return square + mask + vectors + min(WORKING_BYTES, 2 * cells * 8)


def _gib(count: int) -> str:
    return f"{count / 2**30:.1f} GiB" if count >= 2**30 else f"{count / 2**20:.0f} MiB"


def _tokens_that_fit(config: AttentionConfig, kept: int, dtype: str, allowed: int, preview) -> int:
    """The most tokens (queries = keys) whose trace fits in ``allowed`` bytes (bisection)."""
    low, high = 0, MAX_TOKENS
    while low < high:
        mid = (low + high + 1) // 2
        if trace_bytes(config, mid, mid, kept, dtype, preview) <= allowed:
            low = mid
        else:
            high = mid - 1
    return low


def _limit(name: str, value: int, most: int, what: str) -> None:
    if value > most:
        raise AttentionInputError(
            name, f"{value} {what} is more than this app computes (at most {most})"
        )


def check_budget(
    config: AttentionConfig,
    n_queries: int,
    n_keys: int,
    *,
    heads_kept: int | None = None,
    dtype: str = "float32",
    available: int | None = None,
    preview: int | None = None,
) -> None:
    """Raise :class:`AttentionInputError` if the computation is beyond the budget.

    ``heads_kept`` is how many heads' [n, m] stages the trace will hold (default: all);
    ``preview`` the display limit when they are kept as pictures instead (a long sequence
    then needs far less); ``available`` overrides the free memory measured now (bytes), which
    is not read for a trace of at most :data:`SMALL_TRACE_BYTES`. Costs O(1).
    """
    _limit("tokens", n_queries, MAX_TOKENS, "query tokens")
    _limit("tokens", n_keys, MAX_TOKENS, "key tokens")
    _limit("heads", config.heads, MAX_HEADS, "heads")
    _limit("d_model", config.d_model, MAX_D_MODEL, "d_model")
    _limit("d_k", config.head_dim, MAX_D_MODEL, "d_k")
    _limit("d_v", config.value_dim, MAX_D_MODEL, "d_v")
    kept = config.heads if heads_kept is None else max(1, min(heads_kept, config.heads))
    need = trace_bytes(config, n_queries, n_keys, kept, dtype, preview)
    if available is None and need <= SMALL_TRACE_BYTES:
        return
    free = available_memory() if available is None else available
    if free is None:
        return
    allowed = int(free * MEMORY_SHARE)
    if need <= allowed:
        return
    fits = _tokens_that_fit(config, kept, dtype, allowed, preview)
    raise AttentionInputError(
        "tokens",
        f"{n_queries} x {n_keys} tokens with {kept} head(s) need about {_gib(need)}, more than "
        f"the {_gib(allowed)} this machine can spare now; about {fits} tokens "
        f"fit with {kept} head(s)",
    )
