"""Issue 32, items 2, 3, 7 and 8: every file of a model folder is checked before it is opened.

A pipe never blocks (item 2), a small file over its size budget is refused by its stat, never
read (item 3), a safetensors header that breaks the format's rules is refused (item 7), and
each problem is named for what it is, never "the checkpoint changed" (item 8)."""

from __future__ import annotations

import json
import os
import struct
import threading
import tracemalloc

import numpy as np
import pytest
from hostile_files import gpt2_config, gpt2_tensors, shard, write_safetensors

import attention_explorer as ae
from attention_explorer.pretrained import ModelError, load_model
from attention_explorer.session import SessionFileError

GIB = 1 << 30


def within(seconds: float, call):
    """``call()``'s result or exception, failing the test when it runs past ``seconds``."""
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s (it hangs)"
    return outcome


def refusal(call, kind=ModelError) -> str:
    outcome = within(20, call)
    error = outcome.get("error")
    assert isinstance(error, kind), outcome
    text = str(error)
    assert "\n" not in text and "Traceback" not in text
    return text


def fifo(path):
    path.unlink(missing_ok=True)
    os.mkfifo(path)


# -- item 2: pipes ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "model.safetensors"])
def test_a_pipe_in_the_folder_is_refused_not_waited_on(model, name):
    fifo(model / name)
    text = refusal(lambda: load_model(model))
    assert f"{name} is a pipe (FIFO), not a file" in text


def test_a_pipe_named_by_the_shard_index_does_not_hang_a_saved_session(model, tmp_path):
    shard(model)
    path = ae.save(ae.from_model(model, "the cat sat", layer=1), tmp_path / "s.json")
    fifo(model / "b.safetensors")
    text = refusal(lambda: ae.load(path), SessionFileError)
    assert "b.safetensors is a pipe (FIFO)" in text and "changed" not in text
    assert "pipe (FIFO)" in refusal(lambda: ae.from_model(model, "the cat"))


def test_the_listing_skips_a_pipe(model, tmp_path):
    fifo(model / "config.json")
    entries = [e for e in within(20, lambda: ae.models([model]))["value"] if e.path == model]
    assert len(entries) == 1 and not entries[0].supported
    assert "config.json is a pipe (FIFO)" in entries[0].reason


# -- item 3: size budgets --------------------------------------------------------------------
def listed(model):
    """The listing's entry of ``model``."""
    return next(e for e in ae.models([model]) if e.path == model)


def sparse(path, size=2 * GIB):
    with path.open("wb") as handle:
        handle.truncate(size)


def small_memory(call):
    tracemalloc.start()
    try:
        return within(20, call)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 64 << 20, f"read {peak:,} bytes"


def test_a_huge_config_is_not_read_by_the_listing(model, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    sparse(model / "config.json")
    entries = [e for e in small_memory(lambda: ae.models([model]))["value"] if e.path == model]
    assert len(entries) == 1 and not entries[0].supported
    assert "config.json is 2,147,483,648 bytes, more than" in entries[0].reason


@pytest.mark.parametrize("name", ["config.json", "tokenizer.json"])
def test_a_huge_small_file_is_refused_by_its_size_when_opening(model, name):
    sparse(model / name)
    error = small_memory(lambda: load_model(model))["error"]
    assert isinstance(error, ModelError) and f"{name} is 2,147,483,648 bytes" in str(error)


def test_a_huge_refs_main_names_refs_main(model, tmp_path, monkeypatch):
    repo = tmp_path / "hub" / "models--someone--tiny"
    (repo / "snapshots").mkdir(parents=True)
    model.rename(repo / "snapshots" / "abc")
    (repo / "refs").mkdir()
    sparse(repo / "refs" / "main")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    error = small_memory(lambda: ae.from_model("someone/tiny", "the cat"))["error"]
    assert isinstance(error, ModelError) and "refs/main is 2,147,483,648 bytes" in str(error)
    (repo / "refs" / "main").write_text("../../../../etc")
    error = within(20, lambda: ae.from_model("someone/tiny", "the cat"))["error"]
    assert "not a file inside" in str(error)


def test_a_huge_shard_index_is_not_read(model):
    shard(model)
    sparse(model / "model.safetensors.index.json")
    error = small_memory(lambda: load_model(model))["error"]
    assert "model.safetensors.index.json is 2,147,483,648 bytes" in str(error)


def test_a_deeply_nested_config_is_one_line(model):
    (model / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    assert "nests more than 64 levels deep" in refusal(lambda: load_model(model))
    assert "nests more than" in listed(model).reason


@pytest.mark.parametrize("names", ["GPT2LMHeadModel", [1, 2], {"a": 1}])
def test_architectures_not_a_list_of_names(model, names):
    config = json.loads((model / "config.json").read_text())
    config["architectures"] = names
    (model / "config.json").write_text(json.dumps(config))
    text = refusal(lambda: load_model(model))
    assert "architectures is" in text and "not a list of class names" in text
    assert "architectures is" in listed(model).reason


# -- item 7: the safetensors format's rules --------------------------------------------------
def spoil(model, **entries):
    write_safetensors(model / "model.safetensors", gpt2_tensors(), header=entries)


def test_overlapping_tensors_are_refused(model):
    entry = {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}  # wte's first bytes
    tensors = gpt2_tensors()
    bias = "h.1.ln_1.bias"
    tensors.pop(bias)
    write_safetensors(model / "model.safetensors", tensors, header={bias: entry})
    text = refusal(lambda: load_model(model))
    assert "overlaps the tensor before it" in text


def test_a_gap_is_refused(model):
    tensors = gpt2_tensors()
    tensors.pop("ln_f.bias")  # the last tensor: its bytes would be a gap if it is named later
    write_safetensors(model / "model.safetensors", tensors)
    raw = bytearray((model / "model.safetensors").read_bytes())
    raw += bytes(32)  # 32 bytes nobody owns at the end
    (model / "model.safetensors").write_bytes(bytes(raw))
    assert "not a valid safetensors file" in refusal(lambda: load_model(model))


def test_a_duplicate_name_is_refused(model):
    path = model / "model.safetensors"
    write_safetensors(path, gpt2_tensors())
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = raw[8 : 8 + length].decode().rstrip()
    first = header.index('"wte.weight"')
    entry_end = header.index("}", first) + 1
    doubled = header[:-1] + ", " + header[first:entry_end] + "}"
    doubled += " " * (-len(doubled) % 8)
    path.write_bytes(struct.pack("<Q", len(doubled)) + doubled.encode() + raw[8 + length :])
    assert "names tensor 'wte.weight' twice" in refusal(lambda: load_model(model))


@pytest.mark.parametrize(
    "entry",
    [
        {"dtype": "F32", "shape": [9], "data_offsets": [0, 32]},  # shape against bytes
        {"dtype": "F64", "shape": [8], "data_offsets": [0, 32]},  # dtype against bytes
        {"dtype": "F32", "shape": [8], "data_offsets": [32, 0]},  # offsets out of order
        {"dtype": "F32", "shape": [-8], "data_offsets": [0, 32]},
    ],
)
def test_an_entry_inconsistent_with_its_bytes_is_refused(model, entry):
    spoil(model, **{"ln_f.bias": entry})
    text = refusal(lambda: load_model(model))
    assert "ln_f.bias" in text or "not a valid safetensors file" in text


# -- item 8: each problem named for what it is ----------------------------------------------
def saved(model, tmp_path):
    shard(model)
    return ae.save(ae.from_model(model, "the cat sat", layer=1), tmp_path / "s.json")


def index_of(model) -> dict:
    return json.loads((model / "model.safetensors.index.json").read_text())


def write_index(model, index) -> None:
    (model / "model.safetensors.index.json").write_text(json.dumps(index))


def test_an_index_naming_a_file_outside_the_folder(model, tmp_path):
    path = saved(model, tmp_path)
    index = index_of(model)
    index["weight_map"]["wte.weight"] = "../../etc/passwd"
    write_index(model, index)
    text = refusal(lambda: ae.load(path), SessionFileError)
    assert "'../../etc/passwd', which is not a file inside" in text and "changed" not in text


def test_a_missing_shard(model, tmp_path):
    path = saved(model, tmp_path)
    (model / "b.safetensors").unlink()
    text = refusal(lambda: ae.load(path), SessionFileError)
    assert "lists the shard b.safetensors, which is missing" in text and "changed" not in text


def test_a_header_length_of_two_to_the_63(model, tmp_path):
    path = saved(model, tmp_path)
    raw = (model / "b.safetensors").read_bytes()
    (model / "b.safetensors").write_bytes(struct.pack("<Q", 1 << 63) + raw[8:])
    text = refusal(lambda: ae.load(path), SessionFileError)
    assert "announces a header of 9,223,372,036,854,775,808 bytes" in text
    assert "changed" not in text


def test_an_index_that_is_a_json_list(model):
    shard(model)
    write_index(model, [1, 2, 3])
    assert "is not a shard index" in refusal(lambda: load_model(model))


def test_a_weight_changed_between_the_old_samples_is_seen(tmp_path, model):
    """Item 6: the fingerprint covers every byte, not 16 sampled blocks of 4 kB: a layer-1
    bias changed where no sample reached opened silently with other numbers."""
    tensors = gpt2_tensors()
    word = np.random.default_rng(3).normal(size=(4000, 8)).astype(np.float32)
    order = {k: v for k, v in tensors.items() if k != "wte.weight"} | {"wte.weight": word}
    (model / "config.json").write_text(json.dumps(gpt2_config(vocab_size=4000)))
    write_safetensors(model / "model.safetensors", order)
    path = ae.save(ae.from_model(model, "the cat sat", layer=0), tmp_path / "s.json")
    raw = (model / "model.safetensors").read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    size = len(raw)
    windows = [(k * size // 16, k * size // 16 + 4096) for k in range(16)]
    unsampled = [
        name
        for name, entry in header.items()
        if name.startswith("h.1.")
        and all(
            8 + length + entry["data_offsets"][1] <= lo
            or 8 + length + entry["data_offsets"][0] >= hi
            for lo, hi in windows
        )
    ]
    assert unsampled, "the fixture should leave a layer-1 tensor between the old samples"
    order[unsampled[0]] = order[unsampled[0]] + np.float32(0.25)
    write_safetensors(model / "model.safetensors", order)
    assert (model / "model.safetensors").stat().st_size == size
    text = refusal(lambda: ae.load(path), SessionFileError)
    assert "changed since this file was saved" in text


def test_a_saved_session_whose_config_grew_huge_names_the_file(model, tmp_path):
    path = ae.save(ae.from_model(model, "the cat sat", layer=0), tmp_path / "s.json")
    sparse(model / "config.json")
    error = small_memory(lambda: ae.load(path))["error"]
    assert isinstance(error, SessionFileError)
    assert "config.json is 2,147,483,648 bytes, more than" in str(error)
    assert "memory" not in str(error) and "changed" not in str(error)
