"""Checkpoints as they are shipped: one ``model.safetensors`` or shards listed in
``model.safetensors.index.json``, with float32, float64, float16 or bfloat16 tensors.

The files are memory-mapped, never read whole: a tensor is converted (to float32 or float64)
only when asked for, so a large checkpoint costs its size in page cache, not twice in RAM.
bfloat16 becomes float32 in one pass (its bits are a float32's high half); after a tensor is
converted its pages can be handed back (:meth:`TensorFile.release`), so a model converted layer
by layer does not keep the whole file resident.
The safetensors layout is small and stable (8 bytes: header length, little-endian; a JSON
header ``{name: {dtype, shape, data_offsets}}``; the data), and is read here directly,
because safetensors' numpy loader refuses bfloat16 ("data type 'bfloat16' not understood").
Every header is checked by the format's rules, as safetensors' own loader checks them: one
entry per name (a duplicate is refused, never "the last wins"), each entry's byte length equal
to its dtype's size times its shape, and the byte ranges in order, back to back from the
start of the data to the end of the file (no overlap, where one tensor would read another's
bytes, and no gap). Every file is checked before it is opened (a regular file, named inside
the folder: :mod:`.safe_paths`), so a shard that is a pipe never blocks.
"""

from __future__ import annotations

import json
import math
import mmap
from pathlib import Path

import numpy as np

from attention_explorer.pretrained.checkpoint.safe_paths import (
    budget_of,
    check_name,
    exists,
    open_checked,
    read_json,
)
from attention_explorer.pretrained.model_errors import ModelError

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
#: Values widened at a time from bfloat16 to float64 (256 KiB of float32: the CPU's cache).
_CHUNK = 1 << 16


def _widen(raw: np.ndarray, kind: str, dtype) -> np.ndarray:
    """A stored tensor as a new ``dtype`` array (None: float32 for bfloat16, else the stored
    view). bfloat16 is a float32's high 16 bits: a shift in a uint32 copy makes the float32,
    never through float64; float64 is widened from it a cache-sized chunk at a time
    (twice as fast as widening the whole tensor's float32 at once)."""
    if kind != "BF16":
        return raw.astype(dtype) if dtype is not None else np.asarray(raw)
    if dtype is None or np.dtype(dtype) == np.float32:
        bits = raw.astype(np.uint32)  # a copy-and-shift: twice as fast as a casting ufunc
        bits <<= 16
        return bits.view(np.float32)
    out = np.empty(raw.shape, dtype=dtype)  # float64: through a small float32 buffer
    flat, into = raw.reshape(-1), out.reshape(-1)
    bits = np.empty(min(_CHUNK, flat.size), dtype=np.uint32)  # [chunk], stays in cache
    for lo in range(0, flat.size, _CHUNK):
        part = bits[: min(_CHUNK, flat.size - lo)]
        part[:] = flat[lo : lo + part.size]
        part <<= 16
        with np.errstate(invalid="ignore"):  # a signalling NaN stays a NaN
            into[lo : lo + part.size] = part.view(np.float32)
    return out


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object's pairs as a dict; ValueError naming a key given twice."""
    found: dict = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the header names tensor {key!r} twice")
        found[key] = value
    return found


def _reason(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "its header nests too deeply"
    if isinstance(exc, OSError):
        return (exc.strerror or type(exc).__name__).lower()
    return str(exc)


class _Shard:
    """One safetensors file, memory-mapped, with its checked header."""

    def __init__(self, path: Path):
        self.path = path
        with open_checked(path) as handle:  # a regular file, opened without blocking
            try:
                size = handle.seek(0, 2)
                handle.seek(0)
                length = int.from_bytes(handle.read(8), "little")
                if not 2 <= length <= min(_MAX_HEADER, size - 8):
                    raise ValueError(
                        f"it announces a header of {length:,} bytes in a file of {size:,}"
                    )
                text = handle.read(length).decode("utf-8")
                header = json.loads(text, object_pairs_hook=_no_duplicates)
                self.data = np.memmap(handle, dtype=np.uint8, mode="r", offset=8 + length)
            except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
                raise ModelError(
                    "files", f"{path} is not a readable safetensors file: {_reason(exc)}"
                ) from None
        self.start = 8 + length  # where the data begins in the file
        if not isinstance(header, dict):
            raise ModelError("files", f"{path} has a header that is not a JSON object")
        header.pop("__metadata__", None)
        self.entries = {name: self._check(name, entry) for name, entry in header.items()}
        self._check_layout()

    def _check_layout(self) -> None:
        """The format's rule: byte ranges in order, back to back, covering the data exactly."""
        end = 0
        for name, (_, _, lo, hi) in sorted(self.entries.items(), key=lambda e: e[1][2:]):
            if lo != end:
                what = "overlaps the tensor before it" if lo < end else "leaves a gap before it"
                raise ModelError(
                    "files",
                    f"{self.path}: tensor {name!r} starts at byte {lo} of the data, where the "
                    f"tensor before it ends at {end}: it {what}; not a valid safetensors file",
                )
            end = hi
        if end != self.data.size:
            raise ModelError(
                "files",
                f"{self.path}: its tensors end at byte {end} of the data, which is "
                f"{self.data.size} bytes long; not a valid safetensors file",
            )

    def _check(self, name: str, entry) -> tuple[str, tuple[int, ...], int, int]:
        try:
            kind, shape, (lo, hi) = entry["dtype"], tuple(entry["shape"]), entry["data_offsets"]
            ok = all(type(v) is int and v >= 0 for v in (*shape, lo, hi)) and lo <= hi
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

    def release(self, name: str) -> None:
        """Unmap the whole pages of tensor ``name`` from this process (they stay in the page
        cache, and come back on the next read): its resident size no longer counts them."""
        mapping = getattr(self.data, "_mmap", None)
        advise = getattr(mmap, "MADV_DONTNEED", None)
        if mapping is None or advise is None or not hasattr(mapping, "madvise"):
            return  # not on this platform: the pages stay mapped, which is only bigger
        _, _, lo, hi = self.entries[name]
        base = self.start - self.start % mmap.ALLOCATIONGRANULARITY  # where the mapping starts
        first = self.start + lo - base  # the tensor's bytes within the mapping
        page = mmap.PAGESIZE
        first, last = -(-first // page) * page, (self.start + hi - base) // page * page
        if last > first:
            try:
                mapping.madvise(advise, first, last - first)
            except (OSError, ValueError):
                pass  # an advice refused changes nothing but the resident size


class TensorFile:
    """Every tensor of a model folder, from one file or from shards, by name."""

    def __init__(self, shards: dict[str, _Shard], where: dict[str, str], folder: Path):
        self.shards, self.where, self.folder = shards, where, folder

    @classmethod
    def open(cls, folder: Path) -> TensorFile:
        """The checkpoint in ``folder``: model.safetensors, else the shards of the index."""
        if exists(folder / SINGLE):  # checked when opened: a pipe or folder is refused
            shard = _Shard(folder / SINGLE)
            return cls({SINGLE: shard}, dict.fromkeys(shard.entries, SINGLE), folder)
        if not exists(folder / INDEX):
            raise ModelError("files", f"{folder} has neither {SINGLE} nor {INDEX}")
        return cls._sharded(folder)

    @classmethod
    def _sharded(cls, folder: Path) -> TensorFile:
        index = read_json(folder / INDEX, budget_of(INDEX))  # within its budget, no pipe
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(weight_map, dict):
            raise ModelError(
                "files",
                f"{folder / INDEX} is not a shard index: it must be a JSON object with a "
                "weight_map object (tensor name -> shard file)",
            )
        shards: dict[str, _Shard] = {}
        for name, file in weight_map.items():
            path = check_name(folder, file, f"{folder / INDEX} (tensor {name!r})")
            if file not in shards:
                if not exists(path):
                    raise ModelError(
                        "files", f"{folder / INDEX} lists the shard {file}, which is missing"
                    )
                shards[file] = _Shard(path)
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
        """Tensor ``name`` converted to ``dtype`` (None: float32 for bfloat16, else as
        stored, still memory-mapped when no conversion is needed)."""
        return self.shards[self.where[name]].get(name, dtype)

    def rows(self, name: str, lo: int, hi: int, dtype) -> np.ndarray:
        """Rows ``lo:hi`` of the 2-D tensor ``name`` converted to ``dtype`` (a new array);
        only those rows' pages are read."""
        kind, shape, start, _ = self.shards[self.where[name]].entries[name]
        item = DTYPES[kind].itemsize * int(np.prod(shape[1:], dtype=np.int64))  # bytes a row
        shard = self.shards[self.where[name]]
        raw = shard.data[start + lo * item : start + hi * item].view(DTYPES[kind])
        return _widen(raw.reshape((hi - lo, *shape[1:])), kind, dtype)

    def take(self, name: str, ids: np.ndarray, dtype) -> np.ndarray:
        """Rows ``ids`` of tensor ``name`` converted to ``dtype``; only their pages are read."""
        shard = self.shards[self.where[name]]
        kind, shape, lo, hi = shard.entries[name]
        raw = shard.data[lo:hi].view(DTYPES[kind]).reshape(shape)  # a view of the mapping
        return _widen(raw[ids], kind, dtype)

    def release(self, name: str) -> None:
        """Hand tensor ``name``'s pages back (see :meth:`_Shard.release`)."""
        self.shards[self.where[name]].release(name)

    def nbytes(self, name: str) -> int:
        """Stored size of tensor ``name`` in bytes."""
        _, _, lo, hi = self.shards[self.where[name]].entries[name]
        return hi - lo
