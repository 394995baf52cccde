"""Checkpoints as shipped (bf16/f16 tensors, shards with an index) and model folders that do
not add up: one line naming the file and the key or tensor, what was expected and found."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.pretrained import ModelError, model_run
from attention_explorer.pretrained.checkpoint.tensor_file import TensorFile

TEXT = "the cat watched the dog"


def write_safetensors(path: Path, tensors: dict, header_patch=None) -> None:
    """A safetensors file from {name: (dtype name, shape, raw bytes)}."""
    header, data = {}, b""
    for name, (kind, shape, raw) in tensors.items():
        header[name] = {
            "dtype": kind,
            "shape": list(shape),
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    if header_patch:
        header_patch(header)
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + data)


def test_bf16_and_f16_values_are_read_exactly(tmp_path):
    values = np.array([[1.5, -2.25], [3.0e-3, 65504.0]], dtype=np.float32)  # [2, 2]
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")  # these values are exact in bf16
    write_safetensors(
        tmp_path / "model.safetensors",
        {
            "a": ("BF16", (2, 2), bf16.tobytes()),
            "b": ("F16", (2, 2), values.astype("<f2").tobytes()),
        },
    )
    t = TensorFile.open(tmp_path)
    got = t.get("a")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, (bf16.astype(np.uint32) << 16).view(np.float32))
    np.testing.assert_array_equal(t.get("b"), values.astype(np.float16).astype(np.float64))
    assert t.info("a") == ("BF16", (2, 2)) and t.get("b", None).dtype == np.float16


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (lambda h: h["a"].update(dtype="F8_E4M3"), "dtype F8_E4M3"),
        (lambda h: h["a"].update(shape=[3, 2]), "needs 24 bytes"),
        (lambda h: h["a"].update(data_offsets=[0, 400]), "needs 16 bytes"),
        (lambda h: h["a"].update(shape="2x2"), "malformed"),
    ],
)
def test_malformed_headers_name_the_tensor(tmp_path, patch, message):
    raw = np.zeros((2, 2), np.float32).tobytes()
    write_safetensors(tmp_path / "model.safetensors", {"a": ("F32", (2, 2), raw)}, patch)
    with pytest.raises(ModelError, match=message) as err:
        TensorFile.open(tmp_path)
    assert "model.safetensors" in str(err.value) and len(str(err.value).splitlines()) == 1


def test_a_truncated_file(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 10**9) + b"{}")
    with pytest.raises(ModelError, match="not a readable safetensors file"):
        TensorFile.open(tmp_path)


def sharded_bf16(src: Path, dst: Path) -> Path:
    import torch
    from transformers import GPT2LMHeadModel

    model = GPT2LMHeadModel.from_pretrained(str(src)).to(torch.bfloat16)
    model.save_pretrained(dst, safe_serialization=True, max_shard_size="40KB")
    shutil.copy(src / "tokenizer.json", dst / "tokenizer.json")
    return dst


def test_a_bf16_sharded_checkpoint_matches_transformers(tmp_path, gpt2_folder):
    torch = pytest.importorskip("torch")
    from transformers import GPT2LMHeadModel

    folder = sharded_bf16(gpt2_folder, tmp_path / "sharded")
    assert (folder / "model.safetensors.index.json").is_file()
    assert not (folder / "model.safetensors").exists()
    assert len(list(folder.glob("model-*-of-*.safetensors"))) > 1
    run = model_run(folder, TEXT, dtype="float64")
    ref = GPT2LMHeadModel.from_pretrained(
        str(folder), attn_implementation="eager", dtype=torch.float64
    ).eval()
    with torch.no_grad():
        out = ref(input_ids=torch.tensor([list(run.ids)]), output_attentions=True)
    np.testing.assert_allclose(run.logits, out.logits[0].numpy(), rtol=0, atol=1e-6)
    attentions = np.stack([a[0].numpy() for a in out.attentions])
    np.testing.assert_allclose(run.attentions, attentions, rtol=0, atol=1e-6)


def test_a_missing_shard_is_named(tmp_path, gpt2_folder):
    folder = sharded_bf16(gpt2_folder, tmp_path / "sharded")
    victim = sorted(folder.glob("model-*-of-*.safetensors"))[-1]
    victim.unlink()
    with pytest.raises(ModelError, match=f"lists the shard {victim.name}, which is missing"):
        model_run(folder, TEXT)


def variant(src: Path, dst: Path, **changes) -> Path:
    shutil.copytree(src, dst)
    config = json.loads((dst / "config.json").read_text())
    config.update(changes)
    (dst / "config.json").write_text(json.dumps(config))
    return dst


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("n_head", 0),
        ("n_head", -4),
        ("n_layer", 10**9),
        ("n_embd", "32"),
        ("n_head", [4]),
        ("n_head", True),
        ("n_embd", 30),
        ("layer_norm_epsilon", float("nan")),
        ("layer_norm_epsilon", "1e-5"),
        ("layer_norm_epsilon", 0),
    ],
)
def test_config_values_that_make_no_sense(tmp_path, gpt2_folder, key, value):
    folder = variant(gpt2_folder, tmp_path / "m", **{key: value})
    with pytest.raises(ModelError) as err:
        model_run(folder, TEXT)
    text = str(err.value)
    assert "config.json" in text and key in text and "expected" in text
    assert len(text.splitlines()) == 1


def test_tensor_shapes_against_the_config(tmp_path, gpt2_folder):
    folder = variant(gpt2_folder, tmp_path / "m", n_head=8, n_embd=32, n_positions=30)
    with pytest.raises(ModelError) as err:
        model_run(folder, TEXT)
    assert "wpe.weight" in str(err.value) and "[24, 32]" in str(err.value)
    assert "[30, 32]" in str(err.value)


def test_token_ids_beyond_the_word_table(tmp_path, gpt2_folder):
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "small-vocab"
    shutil.copytree(gpt2_folder, folder)
    tensors = load_file(str(folder / "model.safetensors"))
    key = next(k for k in tensors if k.endswith("wte.weight"))
    tensors[key] = tensors[key][:10].copy()
    save_file(tensors, str(folder / "model.safetensors"))
    with pytest.raises(ModelError, match="beyond the 10 rows") as err:
        model_run(folder, TEXT)
    assert "tokenizer.json" in str(err.value)
