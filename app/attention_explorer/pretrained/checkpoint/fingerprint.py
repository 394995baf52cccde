"""A model folder's fingerprint: every byte loading reads, hashed once per file version.

SHA-256 over config.json, tokenizer.json, the shard index when there is one and the SHA-256
of each safetensors file's whole content (header and every weight). A file's content hash is
computed once and kept for the life of the process under its path, size, modification and
change times and inode (:data:`_KNOWN`): hashing reads the file at about 1.8 GB/s (MiniLM's
90 MB in 0.05 s, a 0.5B model's 1 GB in 0.6 s), and the next fingerprint of an unchanged
file costs a stat. So a weight changed anywhere is seen, not only in sampled blocks.

Every path is checked as the loader checks it before it is opened
(:func:`~attention_explorer.pretrained.checkpoint.source.check_model_files`: regular files
named inside the folder, small files within their budgets): a shard index naming a pipe
or ``../../etc/passwd`` is a ModelError naming it, never a hang.

Files saved before this version hold the earlier, sampled fingerprint (``sha256:<hex>``:
headers and 16 samples of 4 kB per file); :func:`matches` still checks those, sampled.
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path

from attention_explorer.pretrained.checkpoint.safe_paths import budget_of, open_checked, read_small
from attention_explorer.pretrained.checkpoint.source import check_model_files, loaded_files
from attention_explorer.pretrained.checkpoint.tensor_file import TensorFile
from attention_explorer.pretrained.model_errors import ModelError

#: The prefix of a complete fingerprint (every byte); ``sha256:`` alone is the sampled one.
COMPLETE = "sha256:v2:"
#: A safetensors header larger than this is not read (real ones are well under 1 MB).
MAX_HEADER_BYTES = 100 * 1024 * 1024
#: The sampled fingerprint of files saved earlier: this many samples of this many bytes.
SAMPLES, SAMPLE_BYTES = 16, 4096
_CHUNK = 8 << 20
#: Content hashes already computed: (path, size, mtime_ns, ctime_ns, inode) -> hex digest.
_KNOWN: dict[tuple, str] = {}


def _key(path: Path, info: os.stat_result) -> tuple:
    return (str(path.resolve()), info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def content_hash(path: Path, info: os.stat_result) -> str:
    """SHA-256 of the whole file ``path`` (stat ``info``), computed once per version."""
    key = _key(path, info)
    known = _KNOWN.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with open_checked(path) as handle:
        try:
            for block in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(block)
        except OSError as exc:
            raise ModelError("files", f"{path} cannot be read: {exc.strerror or exc}") from None
    _KNOWN[key] = digest.hexdigest()
    return _KNOWN[key]


def _files(folder: Path) -> list[tuple[Path, os.stat_result]]:
    return check_model_files(folder, loaded_files(folder))


def fingerprint(folder: str | os.PathLike) -> str:
    """``sha256:v2:<hex>`` of every file loading ``folder`` reads (see the module docstring).

    Raises ModelError naming the file when one is missing, not a regular file, outside the
    folder, over its budget or unreadable.
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for path, info in _files(folder):
        digest.update(f"{path.name}\0{info.st_size}\0".encode())
        if path.suffix == ".safetensors":
            digest.update(content_hash(path, info).encode())
        else:
            digest.update(read_small(path, budget_of(path.name)))
    return COMPLETE + digest.hexdigest()


def _header_and_samples(path: Path, size: int) -> bytes:
    """The safetensors header of ``path`` and :data:`SAMPLES` evenly spread slices of it."""
    with open_checked(path) as handle:
        head = handle.read(8)
        if len(head) != 8:
            raise ModelError("files", f"{path} is too short to be a safetensors file")
        (length,) = struct.unpack("<Q", head)
        if length > min(MAX_HEADER_BYTES, size - 8):
            raise ModelError(
                "files",
                f"{path} announces a header of {length:,} bytes in a file of {size:,}; "
                "not a safetensors file",
            )
        parts = [head, handle.read(length)]
        for k in range(SAMPLES):
            handle.seek(k * size // SAMPLES)
            parts.append(handle.read(SAMPLE_BYTES))
    return b"".join(parts)


def sampled_fingerprint(folder: str | os.PathLike) -> str:
    """The earlier, sampled ``sha256:<hex>`` (config, tokenizer, each safetensors file's size,
    header and 16 samples of 4 kB), to check files saved with it; paths checked the same."""
    folder = Path(folder)
    digest = hashlib.sha256()
    files = _files(folder)
    for path, _ in files[:2]:  # config.json, tokenizer.json
        digest.update(path.name.encode() + b"\0" + read_small(path, budget_of(path.name)))
    for path, info in sorted(
        (f for f in files if f[0].suffix == ".safetensors"), key=lambda f: f[0].name
    ):
        digest.update(f"{path.name}\0{info.st_size}\0".encode())
        digest.update(_header_and_samples(path, info.st_size))
    return "sha256:" + digest.hexdigest()


def is_sampled(print_: str) -> bool:
    """True when ``print_`` is the earlier, sampled fingerprint."""
    return not print_.startswith(COMPLETE)


def matches(folder: Path, expected: str) -> bool:
    """Whether ``folder``'s fingerprint, of the kind ``expected`` is, equals it; ModelError
    when the folder cannot be read or, when they differ, its checkpoint is not a valid one."""
    found = sampled_fingerprint(folder) if is_sampled(expected) else fingerprint(folder)
    if found != expected:
        TensorFile.open(folder)  # a malformed checkpoint is named as such, not as "changed"
    return found == expected
