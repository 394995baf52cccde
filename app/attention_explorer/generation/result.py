"""What :func:`~attention_explorer.generation.loop.generate` returns: the tokens, one
:class:`Step` per generated token and one :class:`LayerCache` per layer (numpy arrays)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Step:
    """The query that predicted one generated token (for the first, the prompt's last token).

    ``position``: the query's position; ``attentions [layers, heads, position + 1]``: its
    attention rows over every position fed so far (exactly 0 where the cache policy or a
    window hid a key); ``probs [vocab]``: the distribution the token was drawn from (the
    model's softmax when greedy; after temperature, top-k and top-p when sampling);
    ``logits [vocab]``: the model's; ``token``/``text``: the token chosen; ``rank``: how many
    tokens the model scored strictly higher (0: its most probable)."""

    position: int
    attentions: np.ndarray
    probs: np.ndarray
    logits: np.ndarray
    token: int
    text: str
    rank: int

    @property
    def probability(self) -> float:
        """The chosen token's probability in :attr:`probs`."""
        return float(self.probs[self.token])

    def top(self, k: int = 10) -> list[tuple[int, float]]:
        """The ``k`` most probable (token id, probability) of :attr:`probs`, best first."""
        order = np.argsort(-self.probs, kind="stable")[:k]
        return [(int(i), float(self.probs[i])) for i in order]


@dataclass(frozen=True, eq=False)
class LayerCache:
    """One layer's KV cache after the last token fed: what the next query could still read
    (less a sliding layer's and the policy's evicted positions). ``positions [m]`` (held,
    numbered as fed: see :mod:`.policy`), ``keys [kv_heads, m, head_dim]`` after RoPE and
    ``values [kv_heads, m, head_dim]``; ``kv_group``: query heads per key/value head.

    A latent-attention layer (DeepSeek-V3) caches ``latent [m, kv_lora]`` (each position's
    normed c_kv) and ``rope_key [m, rope]`` (its one rotary key, after RoPE) and nothing
    else: its ``keys [heads, m, nope + rope]`` and ``values [heads, m, v_dim]`` are the heads'
    up-projections of them, given for the views, and the bytes are the latent's."""

    positions: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    kv_group: int
    latent: np.ndarray | None = None
    rope_key: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        """The bytes the cache holds (keys and values; a latent layer's latent and rotary
        key)."""
        if self.latent is not None:
            return int(self.latent.nbytes + self.rope_key.nbytes)
        return int(self.keys.nbytes + self.values.nbytes)

    @property
    def bytes_per_position(self) -> int:
        """The bytes one position costs in this layer (its key and value for every kv head;
        a latent layer's latent and rotary key)."""
        if self.latent is not None:
            width = self.latent.shape[-1] + self.rope_key.shape[-1]
            return int(width * self.latent.itemsize)
        kv, _, d_k = self.keys.shape
        return int((d_k + self.values.shape[-1]) * kv * self.keys.itemsize)


@dataclass(frozen=True, eq=False)
class Generation:
    """A prompt and what the model wrote after it: ``ids``/``tokens`` (the prompt's, then the
    generated ones), ``prompt_length``, ``steps`` (one per generated token) and ``cache``
    (one :class:`LayerCache` per layer: of the positions fed to the model, the prompt and every
    generated token but the last, those the next query could still read)."""

    model: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    prompt_length: int
    steps: Sequence[Step]
    cache: Sequence[LayerCache]
    policy: object
    dtype: str

    @property
    def generated(self) -> tuple[int, ...]:
        """The generated ids."""
        return self.ids[self.prompt_length :]

    @property
    def cache_bytes(self) -> int:
        """The bytes every layer's cache holds."""
        return sum(layer.nbytes for layer in self.cache)
