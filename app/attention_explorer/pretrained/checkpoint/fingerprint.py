"""A model folder's fingerprint: cheap, yet catches a retrained checkpoint of the same shapes.

SHA-256 of config.json, tokenizer.json, each safetensors file's size, its header (names,
dtypes, shapes and offsets of every tensor) and 16 samples of 4 kB spread over it, not of all
weights. A session saved by reference (:mod:`attention_explorer.session.model_reference`)
stores it, and opening the session refuses a folder whose fingerprint changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path

#: A safetensors header larger than this is not read (real ones are well under 1 MB).
MAX_HEADER_BYTES = 100 * 1024 * 1024
#: The fingerprint also reads this many samples of this many bytes spread over each file.
SAMPLES, SAMPLE_BYTES = 16, 4096


def _safetensors_files(folder: Path) -> list[Path]:
    """model.safetensors, or the shards a sharded checkpoint's index names (sorted)."""
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        shards = json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values()
        return [folder / name for name in sorted(set(map(str, shards)))]
    return [folder / "model.safetensors"]


def _header_and_samples(path: Path) -> bytes:
    """The safetensors header of ``path`` (its 8-byte length, then the JSON it announces) and
    :data:`SAMPLES` evenly spread slices of the file (a retrained checkpoint differs there)."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(8)
        if len(head) != 8:
            raise ValueError(f"{path.name} is too short to be a safetensors file")
        (length,) = struct.unpack("<Q", head)
        if length > MAX_HEADER_BYTES:
            raise ValueError(f"{path.name} announces a {length}-byte header")
        parts = [head, handle.read(length)]
        for k in range(SAMPLES):
            handle.seek(k * size // SAMPLES)
            parts.append(handle.read(SAMPLE_BYTES))
    return b"".join(parts)


def fingerprint(folder: str | os.PathLike) -> str:
    """``sha256:<hex>`` of a model folder's config, tokenizer, safetensors sizes and headers,
    and 16 samples of 4 kB spread over each safetensors file.

    Reads config.json, tokenizer.json and under 100 kB per safetensors file (never all weights).
    Raises OSError or ValueError when the folder cannot be read.
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for name in ("config.json", "tokenizer.json"):
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes())
    for path in _safetensors_files(folder):
        digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
        digest.update(_header_and_samples(path))
    return "sha256:" + digest.hexdigest()
