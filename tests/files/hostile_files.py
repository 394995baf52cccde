"""Hostile model files: a tiny GPT-2 written by hand (numpy + a hand-written safetensors
header, a word-level tokenizer built with ``tokenizers``), to copy and spoil."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

WORDS = ["<unk>", "the", "cat", "sat", "on", "mat", "a", "dog"]
D, LAYERS, HEADS, POSITIONS = 8, 2, 2, 16


def write_safetensors(path: Path, tensors: dict[str, np.ndarray], header: dict | None = None):
    """``tensors`` (float32) as a safetensors file, back to back in the given order; ``header``
    overrides entries of the written header (to spoil it)."""
    entries, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype="<f4").tobytes()
        entries[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    entries.update(header or {})
    text = json.dumps(entries).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def gpt2_tensors(seed: int = 0) -> dict[str, np.ndarray]:
    """Every tensor of a 2-layer GPT-2 with d_model 8 (Conv1D weights stored [in, out])."""
    rng = np.random.default_rng(seed)
    t = {"wte.weight": rng.normal(size=(len(WORDS), D))}
    t["wpe.weight"] = rng.normal(size=(POSITIONS, D))
    for i in range(LAYERS):
        p = f"h.{i}."
        for norm in ("ln_1", "ln_2"):
            t[p + norm + ".weight"] = 1 + 0.1 * rng.normal(size=D)
            t[p + norm + ".bias"] = 0.1 * rng.normal(size=D)
        for name, shape in (
            ("attn.c_attn", (D, 3 * D)),
            ("attn.c_proj", (D, D)),
            ("mlp.c_fc", (D, 4 * D)),
            ("mlp.c_proj", (4 * D, D)),
        ):
            t[p + name + ".weight"] = rng.normal(size=shape)
            t[p + name + ".bias"] = 0.1 * rng.normal(size=shape[1])
    t["ln_f.weight"] = np.ones(D)
    t["ln_f.bias"] = np.zeros(D)
    return {k: v.astype(np.float32) for k, v in t.items()}


def gpt2_config(**more) -> dict:
    """config.json of the tiny GPT-2."""
    return {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "n_layer": LAYERS,
        "n_head": HEADS,
        "n_embd": D,
        "n_positions": POSITIONS,
        "vocab_size": len(WORDS),
        "layer_norm_epsilon": 1e-5,
        **more,
    }


def word_tokenizer(path: Path, pre_tokenizer=None, normalizer=None) -> None:
    """A word-level tokenizer.json over :data:`WORDS` splitting on spaces (or as given)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizer or pre_tokenizers.WhitespaceSplit()
    if normalizer is not None:
        tokenizer.normalizer = normalizer
    tokenizer.save(str(path))


def shard(folder: Path, split: int = 10) -> None:
    """Turn ``folder``'s model.safetensors into two shards and an index."""
    tensors = gpt2_tensors()
    names = list(tensors)
    parts = {"a.safetensors": names[:split], "b.safetensors": names[split:]}
    for file, keys in parts.items():
        write_safetensors(folder / file, {k: tensors[k] for k in keys})
    weight_map = {k: file for file, keys in parts.items() for k in keys}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    (folder / "model.safetensors").unlink()
