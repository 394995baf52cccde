"""The size budget at the door: sizes asked of a session are checked before anything is made.

``ae.resize(s, tokens=10**30)`` must not start allocating: :func:`check_resize` checks each
size's type (a whole number), its range (at least 1, at most the engine's limits) and the
memory the new session's matrices would take, in O(1), and raises one line naming the size.
:func:`check_paste_text` bounds text pasted into a matrix editor before it is parsed.
No Qt here.
"""

from __future__ import annotations

from attention_explorer.engine import AttentionInputError
from attention_explorer.engine.budget import (
    MAX_D_MODEL,
    MAX_HEADS,
    MAX_TOKENS,
    MEMORY_SHARE,
    available_memory,
)
from attention_explorer.session import argument_checks as api_checks
from attention_explorer.session.document import SessionData

#: Largest value of each size ``resize`` takes.
LIMITS = {
    "tokens": MAX_TOKENS,
    "kv_tokens": MAX_TOKENS,
    "heads": MAX_HEADS,
    "kv_heads": MAX_HEADS,
    "d_model": MAX_D_MODEL,
    "d_k": MAX_D_MODEL,
}
#: Copies of the new matrices alive at once while resizing (old, random fill, result).
RESIZE_COPIES = 3
#: Pasted text longer than this is refused before it is read: about 100,000 numbers, far more
#: than an editor's slice shows, and parsed in well under a second.
MAX_PASTE_CHARS = 1_000_000


def _gib(count: float) -> str:
    return f"{count / 2**30:.1f} GiB" if count >= 2**30 else f"{count / 2**20:.0f} MiB"


def session_elements(n: int, m: int, heads: int, kv_heads: int, d_model: int, d_k: int) -> int:
    """Numbers held by a session of these sizes (both modes counted: an upper bound)."""
    direct = heads * n * d_k + 2 * kv_heads * m * d_k  # Q [h, n, dk], K and V [kv, m, dk]
    projection = (n + m) * d_model + 4 * d_model * heads * d_k  # X, X_kv, W_Q, W_K, W_V, W_O
    return direct + projection


def _sizes(data: SessionData, given: dict[str, int | None]) -> dict[str, int]:
    """The sizes after the resize (what is not given stays as it is)."""
    config = data.config
    current = {
        "tokens": len(data.tokens),
        "kv_tokens": len(data.key_tokens),
        "heads": config.heads,
        "kv_heads": config.n_kv_heads,
        "d_model": config.d_model or 1,
        "d_k": config.head_dim,
    }
    sizes = {name: given.get(name) or value for name, value in current.items()}
    if given.get("tokens") and not given.get("kv_tokens") and config.attention != "cross":
        sizes["kv_tokens"] = sizes["tokens"]
    return sizes


def check_resize(
    data: SessionData, function: str = "ae.resize", available: int | None = None, **given
) -> None:
    """Raise before any work if a resize of ``data`` to the ``given`` sizes cannot be done.

    Each given size must be a whole number (ArgumentTypeError otherwise), at least 1 and at
    most its limit (AttentionInputError naming the size); the new matrices must fit in the
    memory this machine can spare (``available`` overrides the measured free bytes).
    """
    checked: dict[str, int | None] = {}
    for name, value in given.items():
        number = api_checks.whole(function, name, value)
        if number is not None:
            if number < 1:
                raise AttentionInputError(name, f"{name} must be at least 1, got {number}")
            if number > LIMITS[name]:
                raise AttentionInputError(
                    name, f"{number} is more than this app computes (at most {LIMITS[name]})"
                )
        checked[name] = number
    tokens, kv_tokens = checked.get("tokens"), checked.get("kv_tokens")
    if tokens and kv_tokens and tokens != kv_tokens and data.config.attention != "cross":
        raise AttentionInputError(
            "kv_tokens",
            f"tokens {tokens} and kv_tokens {kv_tokens} differ, but in self-attention the keys "
            "are the tokens; give one of them, or make the session cross-attention",
        )
    sizes = _sizes(data, checked)
    if sizes["heads"] * sizes["d_k"] > MAX_D_MODEL:
        raise AttentionInputError(
            "d_k",
            f"{sizes['heads']} heads x d_k {sizes['d_k']} is wider than this app computes "
            f"(at most {MAX_D_MODEL})",
        )
    need = (
        8
        * RESIZE_COPIES
        * session_elements(
            sizes["tokens"],
            sizes["kv_tokens"],
            sizes["heads"],
            sizes["kv_heads"],
            sizes["d_model"],
            sizes["d_k"],
        )
    )  # float64 bytes
    free = available_memory() if available is None else available
    if free is not None and need > free * MEMORY_SHARE:
        raise AttentionInputError(
            "tokens",
            f"these sizes need about {_gib(need)}, more than the {_gib(free * MEMORY_SHARE)} "
            "this machine can spare now; choose fewer tokens, heads or a smaller d_model",
        )


def check_paste_text(text: str, limit: int = MAX_PASTE_CHARS) -> str | None:
    """None if ``text`` may be parsed as a pasted block, else the one-line reason (O(1))."""
    if len(text) > limit:
        return (
            f"the clipboard holds {len(text):,} characters, more than the {limit:,} a paste takes"
        )
    return None
