"""Cache policies: which cached positions a query reads, and edits to cached vectors.

A policy is given as ``None`` or ``"full"`` (every position), or a dict with any of:

- ``{"window": W}``: a query at position i reads the keys at positions j with
  ``i - j < W`` (its own and the W - 1 before it: transformers' ``sliding_window`` rule, so a
  policy window equal to a model's own sliding window changes nothing);
- ``{"sinks": S, "window": W}``: the first S positions as well (StreamingLLM's attention
  sinks; ``sinks`` needs a ``window``);
- ``{"evict": [p, ...]}``: those positions are dropped from the cache once their own token has
  been through the model (its own query still reads its key, else its row would be empty;
  every later query does not);
- ``{"edit": [{"layer": l, "head": g, "position": p, "key": [...]}, ...]}`` (or ``"value"``):
  the cached key (after RoPE) or value of key/value head g at position p in layer l is
  replaced by the vector given as soon as it is written, so that position's own query and
  every later one read the edited vector.

**How positions are numbered after eviction.** A position keeps the number it was fed at: the
cache holds keys *after* RoPE (as transformers' ``DynamicCache`` does), an eviction only drops
entries, and a new query is rotated at its true position in the text. StreamingLLM (and
transformers' former ``SinkCache``) instead re-numbered the kept keys by their slot in the
cache, re-rotating every cached key at every eviction, so that a model never sees a distance
longer than its cache. We keep the true numbers because (1) every cached vector then stays
exactly the one the model computed, which is what the cache view shows and what an edit
changes; (2) a model with learned absolute positions (GPT-2) has its position inside the
hidden state, where it cannot be re-numbered; (3) within the model's trained context the
distances are the ones the model was trained on. The cost: past the trained context a
re-numbered cache would keep distances short and ours does not.

With any policy the weights on positions a query does not read are exactly 0 (their scores
are -inf before the softmax) and every row sums to 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import GenerationError

KEYS = ("window", "sinks", "evict", "edit")
EDIT_KEYS = ("layer", "head", "position", "key", "value")


@dataclass(frozen=True)
class Edit:
    """One cached vector replaced: layer, key/value head, position, ``"key"`` or ``"value"``,
    and the new vector ``[head_dim]`` (float64)."""

    layer: int
    head: int
    position: int
    part: str
    vector: np.ndarray


@dataclass(frozen=True)
class CachePolicy:
    """A parsed policy (see the module docstring); ``CachePolicy()`` is the full cache."""

    window: int | None = None
    sinks: int = 0
    evict: frozenset = frozenset()
    edits: tuple = ()

    @property
    def full(self) -> bool:
        """True when every query reads every earlier position, unedited."""
        return self.window is None and not self.evict and not self.edits

    def visible(self, queries: np.ndarray, m: int, model_window: int | None) -> np.ndarray:
        """``visible [t, m]``: True where the query at position ``queries[i]`` reads the key at
        position j < m: causal, the model's own sliding window (``model_window``) and this
        policy together; a query always reads its own key."""
        i = np.asarray(queries)[:, None]  # [t, 1]
        j = np.arange(m)[None, :]  # [1, m]
        seen = j <= i  # [t, m] causal
        if model_window is not None:
            seen &= i - j < model_window
        kept = np.ones((1, m), dtype=bool)  # [1, m]
        if self.window is not None:
            kept = (i - j < self.window) | (j < self.sinks)  # [t, m]
        if self.evict:
            kept = kept & ~np.isin(j, sorted(self.evict))
        return seen & (kept | (j == i))  # [t, m]


def _count(value, name: str, least: int) -> int:
    """``value`` as an int >= ``least``, else a GenerationError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise GenerationError(
            "policy", f"cache policy {name} must be a whole number >= {least}, not {value!r}"
        )
    return int(value)


def _edit(item, sizes: Mapping[str, int]) -> Edit:
    """One edit dict checked against ``sizes`` (layers, kv_heads, positions, d_k, d_v)."""
    if not isinstance(item, Mapping):
        raise GenerationError("policy", f"a cache edit must be a dict, not {item!r}")
    unknown = sorted(set(item) - set(EDIT_KEYS))
    parts = [p for p in ("key", "value") if p in item]
    if unknown or len(parts) != 1:
        raise GenerationError(
            "policy",
            "a cache edit holds layer, head, position and one of key or value"
            + (f"; unknown: {', '.join(map(str, unknown))}" if unknown else ""),
        )
    layer = _count(item.get("layer"), "edit layer", 0)
    head = _count(item.get("head"), "edit head", 0)
    position = _count(item.get("position"), "edit position", 0)
    for value, limit, name in (
        (layer, sizes["layers"], "layers"),
        (head, sizes["kv_heads"], "key/value heads"),
        (position, sizes["positions"], "positions fed to the model"),
    ):
        if value >= limit:
            raise GenerationError(
                "policy",
                f"cache edit {name[:-1] if name.endswith('s') else name} {value} is "
                f"beyond the {limit} {name}",
            )
    part = parts[0]
    vector = np.asarray(item[part], dtype=np.float64).reshape(-1)  # [head_dim]
    size = sizes["d_k" if part == "key" else "d_v"]
    if vector.shape != (size,) or not np.isfinite(vector).all():
        raise GenerationError(
            "policy", f"a cache edit's {part} must be {size} finite numbers, not {vector.shape}"
        )
    return Edit(layer, head, position, part, vector)


def parse_policy(policy, sizes: Mapping[str, int]) -> CachePolicy:
    """``policy`` (None, ``"full"`` or a dict, see the module docstring) as a
    :class:`CachePolicy`; a GenerationError naming the key that is wrong."""
    if policy is None or policy == "full":
        return CachePolicy()
    if not isinstance(policy, Mapping):
        raise GenerationError(
            "policy", f"cache_policy must be None, 'full' or a dict, not {policy!r}"
        )
    unknown = sorted(map(str, set(policy) - set(KEYS)))
    if unknown:
        raise GenerationError(
            "policy", f"unknown cache policy key {', '.join(unknown)}; known: {', '.join(KEYS)}"
        )
    window = policy.get("window")
    window = None if window is None else _count(window, "window", 1)
    sinks = _count(policy.get("sinks", 0), "sinks", 0)
    if sinks and window is None:
        raise GenerationError("policy", "cache policy sinks needs a window (keep S and last W)")
    evict = policy.get("evict", ())
    if isinstance(evict, (str, bytes)) or not isinstance(evict, Sequence):
        raise GenerationError("policy", f"cache policy evict must be a list, not {evict!r}")
    evicted = frozenset(_count(p, "evict position", 0) for p in evict)
    edits = policy.get("edit", ())
    if isinstance(edits, Mapping):
        edits = [edits]
    return CachePolicy(window, sinks, evicted, tuple(_edit(e, sizes) for e in edits))


def policy_dict(policy) -> dict:
    """``policy`` (None, ``"full"``, a dict or a :class:`CachePolicy`) as the dict form
    ``ae.generate`` takes (``{}`` for the full cache): what a window shows and reruns with."""
    if policy is None or policy == "full":
        return {}
    if isinstance(policy, Mapping):
        out = {k: v for k, v in policy.items()}
        if isinstance(out.get("edit"), Mapping):
            out["edit"] = [out["edit"]]
        return out
    out: dict = {}
    if policy.window is not None:
        out["window"] = policy.window
    if policy.sinks:
        out["sinks"] = policy.sinks
    if policy.evict:
        out["evict"] = sorted(policy.evict)
    if policy.edits:
        out["edit"] = [
            {
                "layer": e.layer,
                "head": e.head,
                "position": e.position,
                e.part: [float(x) for x in e.vector],
            }
            for e in policy.edits
        ]
    return out


def describe(policy) -> str:
    """``policy`` in a few words for a label: "full cache", "window 4", "sinks 2 + window 4",
    "positions 1, 3 evicted", "2 cached vectors edited" (joined by "; ")."""
    d = policy_dict(policy)
    parts = []
    if "window" in d:
        sinks = d.get("sinks", 0)
        parts.append(f"sinks {sinks} + window {d['window']}" if sinks else f"window {d['window']}")
    if d.get("evict"):
        evicted = sorted(d["evict"])
        word = "position" if len(evicted) == 1 else "positions"
        parts.append(f"{word} {', '.join(map(str, evicted))} evicted")
    if d.get("edit"):
        count = len(d["edit"])
        parts.append(f"{count} cached vector{'s' if count != 1 else ''} edited")
    return "; ".join(parts) or "full cache"
