"""Tokenizers as Llama 2, Llama 3 and Qwen2 ship them (tests/models/tokenizer_fixtures.py):
the explorer's ids equal transformers' ``AutoTokenizer`` for plain text and for chat special
tokens typed in the text, the BOS comes once, special tokens are labelled as the tokenizer
spells them and never followed by the walkthrough, and a tiny random Llama reading the text
through that tokenizer matches transformers fed transformers' ids."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_explorer.pretrained.checkpoint.tokenize import load_tokenizer, special_ids, tokenize
from attention_explorer.walkthrough.focus import choose_focus, is_content
from tests.models import tokenizer_fixtures as fx
from tests.models.test_model_panel import window  # noqa: F401  (the real window)

transformers = pytest.importorskip("transformers")
pytest.importorskip("torch")

FOLDERS = {"llama2": fx.llama2_folder, "llama3": fx.llama3_folder, "qwen2": fx.qwen2_folder}
BOS = {"llama2": "<s>", "llama3": "<|begin_of_text|>", "qwen2": None}
CASES = [(family, text) for family in FOLDERS for text in (*fx.PLAIN_TEXTS, *fx.CHAT_TEXTS[family])]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """One folder per family, built once."""
    root = tmp_path_factory.mktemp("shipped")
    return {family: make(root / family) for family, make in FOLDERS.items()}


def _auto(folder):
    transformers.logging.set_verbosity_error()
    return transformers.AutoTokenizer.from_pretrained(folder)


def _ours(folder, text: str):
    return tokenize(load_tokenizer(folder), text, 512)


@pytest.mark.parametrize(("family", "text"), CASES)
def test_ids_equal_transformers(folders, family, text):
    folder = folders[family]
    assert list(_ours(folder, text).ids) == _auto(folder)(text)["input_ids"]


@pytest.mark.parametrize("family", FOLDERS)
def test_each_chat_token_typed_in_the_text_is_one_special_token(folders, family):
    folder = folders[family]
    vocab = load_tokenizer(folder).get_vocab()
    marked = special_ids(load_tokenizer(folder))
    for text in fx.CHAT_TEXTS[family]:
        toks = _ours(folder, text)
        typed = ("<|start_header_id|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>")
        for token in (t for t in typed if t in text):
            assert toks.tokens.count(token) == text.count(token)
            index = toks.tokens.index(token)
            assert toks.ids[index] == vocab[token] and toks.special[index]
        assert sum(toks.special) == sum(1 for i in toks.ids if i in marked)


@pytest.mark.parametrize("text", ["the cat</s>sat", "  leading spaces"])
def test_llama2_text_glued_to_a_special_token_follows_the_shipped_file(folders, text):
    """SentencePiece's dummy "▁" before every piece of text, as tokenizer.json's normalizer
    says (transformers 5's legacy=False LlamaTokenizer drops it here: see tokenize.py)."""
    from tokenizers import Tokenizer

    folder = folders["llama2"]
    shipped = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text)
    toks = _ours(folder, text)
    assert toks.ids == tuple(shipped.ids)
    assert shipped.tokens[-1].startswith("▁") or shipped.tokens[1:3] == ["▁", "▁"]


@pytest.mark.parametrize("family", ["llama2", "llama3"])
def test_the_bos_comes_once_and_first(folders, family):
    folder, bos = folders[family], BOS[family]
    bos_id = load_tokenizer(folder).token_to_id(bos)
    toks = _ours(folder, "the cat sat")
    assert toks.ids[0] == bos_id and toks.ids.count(bos_id) == 1
    assert toks.tokens[0] == bos and toks.special[0] and not any(toks.special[1:])
    # typed at the start, as a rendered chat template begins: still once, and the rest is
    # what transformers makes of the text without it
    text = fx.BOS_TEXTS[family]
    typed = _ours(folder, text)
    assert typed.ids.count(bos_id) == 1
    assert list(typed.ids) == _auto(folder)(text[len(bos) :])["input_ids"]


def test_qwen2_has_no_bos(folders):
    toks = _ours(folders["qwen2"], "The cat sat")
    assert not any(toks.special) and toks.tokens[0] == "The"


@pytest.mark.parametrize(
    "config",
    [
        {"add_bos_token": False},
        {"add_bos_token": None},
        {"add_eos_token": True},
    ],
    ids=["add_bos_false", "no_add_bos_key", "add_eos_true"],
)
def test_add_bos_token_in_the_config_changes_nothing_as_in_transformers(tmp_path, config):
    """transformers drops add_bos_token / add_eos_token when tokenizer.json is there: its
    post-processor alone decides; so do we (one BOS, no EOS)."""
    folder = fx.llama2_folder(tmp_path, **config)
    ids = list(_ours(folder, "the cat sat").ids)
    assert ids == _auto(folder)("the cat sat")["input_ids"]
    assert ids.count(1) == 1 and 2 not in ids


def test_a_post_processor_without_bos_gives_none_as_in_transformers(tmp_path):
    folder = fx.llama2_folder(tmp_path, add_bos_token=True)
    spec = json.loads((folder / "tokenizer.json").read_text())
    spec["post_processor"] = None
    (folder / "tokenizer.json").write_text(json.dumps(spec))
    ids = list(_ours(folder, "the cat sat").ids)
    assert ids == _auto(folder)("the cat sat")["input_ids"] and 1 not in ids


@pytest.mark.parametrize("family", FOLDERS)
def test_labels_are_plain_text_special_tokens_as_spelled(folders, family):
    folder = folders[family]
    text = fx.CHAT_TEXTS[family][0]
    toks = _ours(folder, text)
    raw = load_tokenizer(folder).encode(text).tokens
    assert any(p.startswith(("▁", "Ġ")) for p in raw)
    for label, special in zip(toks.tokens, toks.special, strict=True):
        assert "▁" not in label and "Ġ" not in label and "Ċ" not in label
        if special:
            assert label.startswith(("<", "[")) and label in load_tokenizer(folder).get_vocab()
    assert "".join(t for t, s in zip(toks.tokens, toks.special) if not s).replace("␣", "")


@pytest.mark.parametrize("family", FOLDERS)
def test_the_walkthrough_never_takes_a_special_token_for_content(folders, family):
    """Every special token the tokenizer lists (BOS, EOS, chat and reserved tokens)."""
    tokenizer = load_tokenizer(folders[family])
    listed = tokenizer.get_added_tokens_decoder()
    names = [listed[i].content for i in special_ids(tokenizer)]
    assert len(names) >= 3
    assert [n for n in names if is_content(n)] == []


# -- a tiny random Llama reading through the shipped tokenizers ---------------------------


def _llama(folder, family: str):
    """A random 2-layer Llama (Qwen2 for qwen2) in ``folder`` sized to its tokenizer."""
    import torch

    from tests.models.test_llama_family import _config, _model_class

    arch = "qwen2" if family == "qwen2" else "llama"
    vocab = load_tokenizer(folder).get_vocab_size()
    torch.manual_seed(1)
    config = _config(arch, vocab)
    config._attn_implementation = "eager"
    model = _model_class(arch)(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0) if p.dim() == 2 else p.add_(0.2 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    return arch


@pytest.mark.parametrize(("family", "index"), [("llama2", 0), ("llama3", 1), ("qwen2", 0)])
def test_the_model_run_matches_transformers_fed_its_own_ids(tmp_path, family, index):
    from attention_explorer.pretrained import model_run
    from tests.models.test_llama_family import TOL, reference

    folder = FOLDERS[family](tmp_path)
    arch = _llama(folder, family)
    text = fx.CHAT_TEXTS[family][index]
    ids = _auto(folder)(text)["input_ids"]
    run = model_run(folder, text, dtype="float64")
    assert list(run.ids) == ids
    attentions, hidden, logits = reference(folder, arch, ids)
    assert np.abs(run.attentions - attentions).max() <= TOL
    assert np.abs(run.logits - logits).max() <= TOL
    assert np.abs(run.hidden[:-1] - hidden[:-1]).max() <= TOL


def test_a_model_session_follows_a_word_never_the_bos(tmp_path):
    from attention_explorer.pretrained import from_model
    from attention_explorer.session.compute_session import compute_session

    folder = fx.llama3_folder(tmp_path)
    _llama(folder, "llama3")
    session = from_model(folder, fx.CHAT_TEXTS["llama3"][0], layer=1)
    assert session.tokens[:2] == ("<|begin_of_text|>", "<|start_header_id|>")
    trace = compute_session(session, dtype="float64")
    for head in range(session.config.heads):
        row = choose_focus(trace, head).row
        assert is_content(session.tokens[row]), (head, session.tokens[row])


def test_the_token_strip_shows_the_bos_and_chat_tokens_as_text(qtbot, window, tmp_path):  # noqa: F811
    """The real window: load the model, open a head; the strip's boxes read the tokens as
    the tokenizer spells the special ones and the words without their ▁ / Ġ marks."""
    from tests.models.test_model_panel import click_map, load

    folder = fx.llama3_folder(tmp_path / "llama3")
    _llama(folder, "llama3")
    text = fx.CHAT_TEXTS["llama3"][0]
    panel = load(qtbot, window, folder, text)
    click_map(qtbot, panel, layer=1, head=0)
    shown = [edit.text() for edit in window.tokens.edits()]
    assert shown == list(_ours(folder, text).tokens)
    assert shown[:2] == ["<|begin_of_text|>", "<|start_header_id|>"]
    assert (
        "<|end_header_id|>" in shown
        and "<|eot_id|>" in shown
        and any("↵" in s for s in shown)
        and not any("Ġ" in s or "Ċ" in s for s in shown)
    )
