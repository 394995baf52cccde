"""Checkpoints as they are shipped: one ``model.safetensors`` or shards listed in
``model.safetensors.index.json``, with float32, float64, float16 or bfloat16 tensors.

The files are memory-mapped, never read whole: a tensor is converted (to float32 or float64)
only when asked for, so a large checkpoint costs its size in page cache, not twice in RAM.
The safetensors layout is small and stable (8 bytes: header length, little-endian; a JSON
header ``{name: {dtype, shape, data_offsets}}``; the data), and is read here directly,
because safetensors' numpy loader refuses bfloat16 ("data type 'bfloat16' not understood").
Every header is checked: offsets inside the file, sizes matching shapes and dtypes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from attention_explorer.pretrained.errors import ModelError

SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"

#: safetensors dtype names this reader converts, with their storage dtype.
DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # the high half of a float32: widened in :func:`_widen`
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_MAX_HEADER = 100 * 1024 * 1024


def _widen(raw: np.ndarray, kind: str, dtype) -> np.ndarray:
    """A stored tensor as ``dtype`` (bfloat16 becomes float32 by a 16-bit shift first)."""
    if kind == "BF16":
        raw = (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(dtype) if dtype is not None else np.asarray(raw)


class _Shard:
    """One safetensors file, memory-mapped, with its checked header."""

    def __init__(self, path: Path):
        self.path = path
        try:
            size = path.stat().st_size
            with path.open("rb") as f:
                length = int.from_bytes(f.read(8), "little")
                if not 2 <= length <= min(_MAX_HEADER, size - 8):
                    raise ValueError(f"a header length of {length} bytes")
                header = json.loads(f.read(length).decode("utf-8"))
            self.data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + length)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise ModelError("files", f"{path} is not a readable safetensors file: {exc}") from None
        if not isinstance(header, dict):
            raise ModelError("files", f"{path} has a header that is not a JSON object")
        header.pop("__metadata__", None)
        self.entries = {name: self._check(name, entry) for name, entry in header.items()}

    def _check(self, name: str, entry) -> tuple[str, tuple[int, ...], int, int]:
        try:
            kind, shape, (lo, hi) = entry["dtype"], tuple(entry["shape"]), entry["data_offsets"]
            ok = all(isinstance(v, int) and v >= 0 for v in (*shape, lo, hi))
        except (KeyError, TypeError, ValueError):
            ok, kind = False, None
        if not ok:
            raise ModelError("files", f"{self.path}: the entry of tensor {name!r} is malformed")
        if kind not in DTYPES:
            raise ModelError(
                "files",
                f"{self.path}: tensor {name!r} has dtype {kind}; supported: {', '.join(DTYPES)}",
            )
        need = math.prod(shape) * DTYPES[kind].itemsize
        if hi - lo != need or hi > self.data.size:
            raise ModelError(
                "files",
                f"{self.path}: tensor {name!r} ({kind} {list(shape)}) needs {need} bytes, "
                f"the file gives it {hi - lo} at offset {lo} of {self.data.size}",
            )
        return kind, shape, lo, hi

    def get(self, name: str, dtype) -> np.ndarray:
        kind, shape, lo, hi = self.entries[name]
        raw = self.data[lo:hi].view(DTYPES[kind]).reshape(shape)  # a view of the mapping
        return _widen(raw, kind, dtype)


class TensorFile:
    """Every tensor of a model folder, from one file or from shards, by name."""

    def __init__(self, shards: dict[str, _Shard], where: dict[str, str], folder: Path):
        self.shards, self.where, self.folder = shards, where, folder

    @classmethod
    def open(cls, folder: Path) -> TensorFile:
        """The checkpoint in ``folder``: model.safetensors, else the shards of the index."""
        if (folder / SINGLE).is_file():
            shard = _Shard(folder / SINGLE)
            return cls({SINGLE: shard}, dict.fromkeys(shard.entries, SINGLE), folder)
        if not (folder / INDEX).is_file():
            raise ModelError("files", f"{folder} has neither {SINGLE} nor {INDEX}")
        return cls._sharded(folder)

    @classmethod
    def _sharded(cls, folder: Path) -> TensorFile:
        try:
            index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
            weight_map = dict(index["weight_map"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError("files", f"{folder / INDEX} cannot be read: {exc}") from None
        shards: dict[str, _Shard] = {}
        for name, file in weight_map.items():
            if not isinstance(file, str) or "/" in file or "\\" in file or file.startswith("."):
                raise ModelError("files", f"{folder / INDEX}: tensor {name!r} names {file!r}")
            if file not in shards:
                if not (folder / file).is_file():
                    raise ModelError(
                        "files", f"{folder / INDEX} lists the shard {file}, which is missing"
                    )
                shards[file] = _Shard(folder / file)
            if name not in shards[file].entries:
                raise ModelError("files", f"{folder / file} lacks tensor {name!r} (see {INDEX})")
        return cls(shards, weight_map, folder)

    def describe(self) -> str:
        """The file (or the index) to name in a message."""
        return str(self.folder / (SINGLE if SINGLE in self.shards else INDEX))

    def names(self) -> list[str]:
        """Every tensor name."""
        return list(self.where)

    def info(self, name: str) -> tuple[str, tuple[int, ...]]:
        """The stored dtype name and shape of tensor ``name``."""
        kind, shape, _, _ = self.shards[self.where[name]].entries[name]
        return kind, shape

    def find(self, name: str, prefixes: tuple[str, ...]) -> str | None:
        """The stored name of ``name`` under the first prefix that has it, or None."""
        return next((p + name for p in prefixes if p + name in self.where), None)

    def get(self, name: str, dtype=np.float64) -> np.ndarray:
        """Tensor ``name`` converted to ``dtype`` (None: float32 for 16-bit floats, else as
        stored, still memory-mapped when no conversion is needed)."""
        return self.shards[self.where[name]].get(name, dtype)
