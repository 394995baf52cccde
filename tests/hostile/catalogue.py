"""Named hostile session files, as a careless or malicious user would make them.

``CASES`` maps a name to ``(class, make)``; ``make(folder)`` writes the file (or FIFO, link,
folder) into ``folder`` and returns its path. Every one of them must be refused with one line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

SAMPLE = json.loads((Path(__file__).parents[1] / "sample_session.json").read_text())
BIG = "1" + "0" * 400  # a 401-digit integer: beyond float range
HUGE = "1" + "0" * 5000  # beyond Python's default int-from-text digit limit too


def sample_text(**changes) -> str:
    """The README's minimal session as JSON text, with top-level keys replaced."""
    doc = json.loads(json.dumps(SAMPLE))
    doc.update(changes)
    return json.dumps(doc)


def with_config(**config) -> str:
    """The sample session with settings added to its config."""
    return sample_text(config={**SAMPLE["config"], **config})


def with_inputs(**inputs) -> str:
    """The sample session with some matrices replaced."""
    return sample_text(inputs={**SAMPLE["inputs"], **inputs})


def projection_text(**config) -> str:
    """A 2-token projection session with settings added to its config."""
    eye = [[1, 0], [0, 1]]
    return json.dumps(
        {
            "format": "attention-explorer-session",
            "version": 1,
            "tokens": ["a", "b"],
            "config": {"heads": 1, "d_model": 2, **config},
            "inputs": {"mode": "projection", "X": eye, "W_Q": eye, "W_K": eye, "W_V": eye},
        }
    )


def replace_in_sample(old: str, new: str) -> str:
    """The sample's text with the first ``old`` replaced by raw ``new`` (not valid via json)."""
    text = json.dumps(SAMPLE)
    assert old in text
    return text.replace(old, new, 1)


def long_direct(n: int) -> str:
    """A direct session of ``n`` tokens (d_k 1), beyond the token budget when n is large."""
    column = [[[0.5]] * n]
    return json.dumps(
        {
            "format": "attention-explorer-session",
            "version": 1,
            "tokens": [f"t{i}" for i in range(n)],
            "config": {"heads": 1},
            "inputs": {"mode": "direct", "Q": column, "K": column, "V": column},
        }
    )


def _text(content: str | bytes):
    def make(folder: Path) -> Path:
        path = folder / "case.json"
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path

    return make


def _fifo(folder: Path) -> Path:
    path = folder / "pipe.json"
    os.mkfifo(path)
    return path


def _dev_zero(folder: Path) -> Path:
    path = folder / "zero.json"
    path.symlink_to("/dev/zero")
    return path


def _folder(folder: Path) -> Path:
    path = folder / "folder.json"
    path.mkdir()
    return path


def _missing(folder: Path) -> Path:
    return folder / "missing.json"


D = "[" * 100_000 + "]" * 100_000
CASES = {
    # -- not JSON, not text ------------------------------------------------------------------
    "empty-file": ("not JSON", _text("")),
    "plain-words": ("not JSON", _text("hello, attention")),
    "truncated": ("not JSON", _text(sample_text()[:-12])),
    "bom-only": ("not JSON", _text(b"\xef\xbb\xbf")),
    "utf16-file": ("not UTF-8", _text(sample_text().encode("utf-16"))),
    "invalid-utf8-byte": ("not UTF-8", _text(b'{"format": "\xff"}')),
    "raw-surrogate-bytes": (
        "not UTF-8",
        _text(replace_in_sample('"love"', '"\udfff"').encode("utf-8", "surrogatepass")),
    ),
    "escaped-lone-high-surrogate": (
        "invalid Unicode",
        _text(replace_in_sample('"love"', '"\\ud800"')),
    ),
    "escaped-lone-low-surrogate": (
        "invalid Unicode",
        _text(replace_in_sample('"love"', '"x\\udc00"')),
    ),
    "nan-literal": ("not JSON", _text(replace_in_sample("[1, 0]", "[NaN, 0]"))),
    "infinity-literal": ("not JSON", _text(replace_in_sample("[1, 0]", "[Infinity, 0]"))),
    # -- not a session -----------------------------------------------------------------------
    "top-level-array": ("wrong JSON type", _text("[1, 2, 3]")),
    "top-level-null": ("wrong JSON type", _text("null")),
    "wrong-format": ("not a session", _text(sample_text(format="something-else"))),
    "missing-format": ("not a session", _text(json.dumps({"version": 1}))),
    "version-2": ("not a session", _text(sample_text(version=2))),
    "version-string": ("wrong JSON type", _text(sample_text(version="1"))),
    "version-400-digits": (
        "huge number",
        _text(replace_in_sample('"version": 1', f'"version": {BIG}')),
    ),
    # -- wrong JSON types outside the matrices ----------------------------------------------
    "notes-number": ("wrong JSON type", _text(sample_text(notes=5))),
    "notes-null": ("wrong JSON type", _text(sample_text(notes=None))),
    "note-not-object": ("wrong JSON type", _text(sample_text(notes=["hi"]))),
    "name-null": ("wrong JSON type", _text(sample_text(name=None))),
    "description-number": ("wrong JSON type", _text(sample_text(description=3))),
    "experiment-list": ("wrong JSON type", _text(sample_text(experiment=[1]))),
    "experiment-try-string": (
        "wrong JSON type",
        _text(sample_text(experiment={"try": {"heads": "3"}})),
    ),
    "tokens-string": ("wrong JSON type", _text(sample_text(tokens="I love pizza"))),
    "token-number": ("wrong JSON type", _text(sample_text(tokens=["I", 3, "pizza"]))),
    "tokens-empty": ("wrong shape", _text(sample_text(tokens=[]))),
    "tokens-too-few": ("wrong shape", _text(sample_text(tokens=["I", "love"]))),
    "token-name-too-long": ("too big", _text(sample_text(tokens=["I", "x" * 5000, "pizza"]))),
    "heads-string": ("wrong JSON type", _text(with_config(heads="one"))),
    "heads-bool": ("wrong JSON type", _text(with_config(heads=True))),
    "heads-zero": ("bad setting", _text(with_config(heads=0))),
    "heads-prime-1e9": ("unbounded work", _text(with_config(heads=1000000007, kv_heads=2))),
    "d-model-prime-1e9": ("unbounded work", _text(projection_text(heads=2, d_model=1000000007))),
    "heads-not-dividing-d-model": ("bad setting", _text(projection_text(heads=3, d_model=2))),
    "temperature-400-digits": (
        "huge number",
        _text(replace_in_sample('"mask": "causal"', f'"mask": "causal", "temperature": {BIG}')),
    ),
    "temperature-5000-digits": (
        "huge number",
        _text(replace_in_sample('"mask": "causal"', f'"mask": "causal", "temperature": {HUGE}')),
    ),
    "temperature-1e400": (
        "huge number",
        _text(replace_in_sample('"mask": "causal"', '"mask": "causal", "temperature": 1e400')),
    ),
    "temperature-negative": ("bad setting", _text(with_config(temperature=-1))),
    "mask-unknown": ("bad setting", _text(with_config(mask="diagonal"))),
    "custom-mask-false-strings": (
        "loose types",
        _text(with_config(mask="custom", custom_mask=[["false"] * 3] * 3)),
    ),
    "custom-mask-numbers": (
        "loose types",
        _text(with_config(mask="custom", custom_mask=[1, 2, 3])),
    ),
    "custom-mask-wrong-shape": (
        "wrong shape",
        _text(with_config(mask="custom", custom_mask=[[True]])),
    ),
    "padded-key-out-of-range": ("bad setting", _text(with_config(mask="padding", padded_keys=[7]))),
    "config-unknown-key": ("unknown key", _text(with_config(colour="red"))),
    "top-level-unknown-key": ("unknown key", _text(sample_text(colour="red"))),
    "config-mode-disagrees": ("bad setting", _text(with_config(mode="projection"))),
    "positional-in-direct-mode": ("bad setting", _text(with_config(positional="sinusoidal"))),
    "cross-without-kv-tokens": ("wrong shape", _text(with_config(attention="cross"))),
    # -- matrices ----------------------------------------------------------------------------
    "matrix-400-digit-integer": ("huge number", _text(replace_in_sample("[1, 0]", f"[{BIG}, 0]"))),
    "matrix-5000-digit-integer": (
        "huge number",
        _text(replace_in_sample("[1, 0]", f"[{HUGE}, 0]")),
    ),
    "matrix-1e400": ("huge number", _text(replace_in_sample("[1, 0]", "[1e400, 0]"))),
    "matrix-1e31": ("huge number", _text(replace_in_sample("[1, 0]", "[1e31, 0]"))),
    "matrix-string": ("wrong JSON type", _text(with_inputs(Q=[[[1, 0], [1, "x"], [0, 1]]]))),
    "matrix-null": ("wrong JSON type", _text(with_inputs(Q=[[[1, 0], [1, None], [0, 1]]]))),
    "matrix-bool": ("wrong JSON type", _text(with_inputs(Q=[[[1, 0], [True, 1], [0, 1]]]))),
    "matrix-object": ("wrong JSON type", _text(with_inputs(Q={"a": 1}))),
    "matrix-empty": ("wrong shape", _text(with_inputs(Q=[]))),
    "matrix-ragged": ("wrong shape", _text(with_inputs(Q=[[[1, 0], [1], [0, 1]]]))),
    "matrix-wrong-rows": ("wrong shape", _text(with_inputs(K=[[[1, 0], [1, 1]]]))),
    "matrix-nested-100-deep": (
        "deep structure",
        _text(with_inputs(Q=json.loads("[" * 100 + "1" + "]" * 100))),
    ),
    "matrix-in-wrong-mode": ("unknown key", _text(with_inputs(X=[[1, 0]]))),
    "brackets-100000-in-token": ("deep structure", _text(replace_in_sample('"love"', D))),
    "brackets-100000-in-matrix": ("deep structure", _text(replace_in_sample("[1, 0]", D))),
    "brackets-100000-top-level": ("deep structure", _text(D)),
    "brackets-100000-unknown-key": (
        "deep structure",
        _text(replace_in_sample('"version": 1', f'"version": 1, "x": {D}')),
    ),
    # -- size budget -------------------------------------------------------------------------
    "tokens-100000": ("too big", _text(long_direct(100_000))),
    "tokens-20000": ("too big", _text(long_direct(20_000))),
    # -- not a regular file ------------------------------------------------------------------
    "fifo": ("not a regular file", _fifo),
    "dev-zero-link": ("not a regular file", _dev_zero),
    "folder": ("not a regular file", _folder),
    "missing": ("not a regular file", _missing),
}
