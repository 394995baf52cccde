"""A model folder checked before its numbers are used: one line naming the file, the key or
tensor, what was expected and what was found.

- config.json sizes: integers (not strings, lists, booleans or NaN), at least 1 and at most a
  bound far above any real model; the norm epsilon a finite number in (0, 1);
- tensor shapes against the sizes the architecture record derives from the config;
- token ids beyond the word table (a tokenizer.json that does not belong to the weights).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.model_errors import ModelError

#: The largest value each size may take (real models stay far below).
SIZE_LIMITS = {
    "layers": 1_000,
    "heads": 1_024,
    "kv_heads": 1_024,
    "d_model": 65_536,
    "head_dim": 4_096,
    "d_ff": 262_144,
    "max_positions": 1_048_576,
    "vocab": 4_194_304,
}
#: Sizes a model cannot do without.
REQUIRED = ("layers", "heads", "d_model", "vocab")


def _size(arch: Architecture, config: Mapping, role: str, where: Path) -> int | None:
    key, default = arch.sizes.get(role, (None, None))
    if key is None:
        return None
    value = config.get(key)
    if value is None:  # absent or null: the family's default (None when it has none)
        value = default
    if value is None:
        if role in REQUIRED:
            raise ModelError("config", f"{where}: {key} is missing; expected a positive integer")
        return None
    limit = SIZE_LIMITS.get(role, 1_000_000)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise ModelError(
            "config",
            f"{where}: {key} is {value!r}; expected an integer from 1 to {limit:,}",
        )
    return value


def check_config_values(arch: Architecture, config: Mapping, where: Path) -> dict[str, int]:
    """The sizes of ``config`` by role, checked; a ModelError naming the first bad key."""
    sizes = {role: _size(arch, config, role, where) for role in arch.sizes}
    heads, d = sizes["heads"], sizes["d_model"]
    if not (sizes.get("head_dim") or sizes.get("rope_dim")) and d % heads:  # rope_dim: latent
        key_d, key_h = arch.sizes["d_model"][0], arch.sizes["heads"][0]
        raise ModelError(
            "config",
            f"{where}: {key_d}={d} is not divisible by {key_h}={heads}; expected a multiple",
        )
    kv = sizes.get("kv_heads")
    if kv and heads % kv:
        raise ModelError("config", f"{where}: {heads} heads cannot share {kv} key/value heads")
    eps = config.get(arch.eps_key, arch.eps_default)
    ok = isinstance(eps, (int, float)) and not isinstance(eps, bool)
    if not ok or not (math.isfinite(eps) and 0 < eps < 1):
        raise ModelError(
            "config", f"{where}: {arch.eps_key} is {eps!r}; expected a number between 0 and 1"
        )
    return sizes


def check_shape(where: str, name: str, found: Sequence[int], expected: Sequence) -> None:
    """A ModelError when tensor ``name``'s shape differs from ``expected`` (None: any)."""
    found = tuple(found)
    same = len(found) == len(expected) and all(e is None or e == f for e, f in zip(expected, found))
    if not same:
        shown = "[" + ", ".join("any" if e is None else str(e) for e in expected) + "]"
        raise ModelError(
            "files",
            f"{where}: tensor {name} has shape {list(found)}, expected {shown} from config.json",
        )


def check_ids(ids: Sequence[int], tokens: Sequence[str], vocab: int, folder: Path) -> None:
    """A ModelError when the tokenizer gives an id beyond the word table's ``vocab`` rows."""
    for token, i in zip(tokens, ids):
        if not 0 <= i < vocab:
            raise ModelError(
                "files",
                f"{folder / 'tokenizer.json'} gives token {token!r} the id {i}, beyond the "
                f"{vocab} rows of the model's word table: the tokenizer does not match the weights",
            )
