"""Small tokenizers laid out as Llama 2, Llama 3 and Qwen2 checkpoints ship them:
``tokenizer.json`` (normalizer, pre-tokenizer, post-processor, decoder and added tokens as in
the real files), ``tokenizer_config.json`` (add_bos_token, bos/eos, added_tokens_decoder,
chat_template, tokenizer_class) and ``special_tokens_map.json``. Only the vocabulary is tiny:
it is trained on the test corpus, so transformers' ``AutoTokenizer`` and the explorer can be
compared on the same folder."""

from __future__ import annotations

import json
from pathlib import Path

from tests.models.conftest import CORPUS

#: Llama 3's pre-tokenizer split (tokenizer.json of Meta-Llama-3-8B).
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: Qwen2's (digits one by one).
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA3_SPECIAL = (
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>",
    "<|reserved_special_token_2|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
)
QWEN2_SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

#: Shortened chat templates in the real ones' style (never rendered by the explorer).
LLAMA2_CHAT = (
    "{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + message['content'] + ' [/INST]' }}{% else %}"
    "{{ ' ' + message['content'] + ' ' + eos_token }}{% endif %}{% endfor %}"
)
LLAMA3_CHAT = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    " + message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"
    "{% endif %}"
)
QWEN2_CHAT = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def _added(token_id: int, content: str) -> dict:
    return {
        "id": token_id,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }


def _decoder_entry(content: str) -> dict:
    entry = _added(0, content)
    del entry["id"]
    return entry


def _write(folder: Path, tokenizer: dict, config: dict, special_map: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False))
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False))
    (folder / "special_tokens_map.json").write_text(json.dumps(special_map))
    return folder


def _trained(pre_tokenizer, vocab_size: int, alphabet=()) -> dict:
    """A BPE model trained on CORPUS with ``pre_tokenizer``: its tokenizer.json "model"."""
    from tokenizers import Tokenizer, models, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizer
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=list(alphabet))
    tokenizer.train_from_iterator(CORPUS, trainer)
    return json.loads(tokenizer.to_str())["model"]


def _map_entry(content: str) -> dict:
    return {
        "content": content,
        "lstrip": False,
        "normalized": False,
        "rstrip": False,
        "single_word": False,
    }


def _template(bos: str, bos_id: int) -> dict:
    return {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": bos, "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
        "pair": [
            {"SpecialToken": {"id": bos, "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": bos, "type_id": 1}},
            {"Sequence": {"id": "B", "type_id": 1}},
        ],
        "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}},
    }


def llama2_folder(folder: Path, add_bos_token: bool | None = True, **config_extra) -> Path:
    """Llama 2 (meta-llama/Llama-2-7b-chat-hf's layout): SentencePiece BPE with byte fallback
    (``<0x0A>``), normalizer Prepend("▁") + Replace(" ", "▁"), a TemplateProcessing that adds
    ``<s>``, and ``add_bos_token`` in tokenizer_config.json (None: the key left out)."""
    from tokenizers import pre_tokenizers

    trained = _trained(pre_tokenizers.Metaspace(), 200)
    specials = ["<unk>", "<s>", "</s>"]
    pieces = [*specials, *(f"<0x{b:02X}>" for b in range(256))]
    pieces += [p for p in sorted(trained["vocab"], key=trained["vocab"].get) if p not in pieces]
    model = {
        "type": "BPE",
        "dropout": None,
        "unk_token": "<unk>",
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": True,
        "byte_fallback": True,
        "ignore_merges": False,
        "vocab": {p: i for i, p in enumerate(pieces)},
        "merges": trained["merges"],
    }
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(i, s) for i, s in enumerate(specials)],
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": "▁"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            ],
        },
        "pre_tokenizer": None,
        "post_processor": _template("<s>", 1),
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0},
            ],
        },
        "model": model,
    }
    config = {
        "add_eos_token": False,
        "added_tokens_decoder": {str(i): _decoder_entry(s) for i, s in enumerate(specials)},
        "bos_token": "<s>",
        "chat_template": LLAMA2_CHAT,
        "clean_up_tokenization_spaces": False,
        "eos_token": "</s>",
        "legacy": False,
        "model_max_length": 1000000000000000019884624838656,
        "pad_token": None,
        "padding_side": "right",
        "sp_model_kwargs": {},
        "tokenizer_class": "LlamaTokenizer",
        "unk_token": "<unk>",
        "use_default_system_prompt": False,
    }
    if add_bos_token is not None:
        config["add_bos_token"] = add_bos_token
    config.update(config_extra)
    special_map = {
        k: _map_entry(v) for k, v in zip(("unk_token", "bos_token", "eos_token"), specials)
    }
    return _write(folder, tokenizer, config, special_map)


def _byte_level(**extra) -> dict:
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, **extra}


def _split(pattern: str) -> dict:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


def _byte_bpe(pattern: str, vocab_size: int, specials) -> tuple[dict, list[dict]]:
    from tokenizers import Regex, pre_tokenizers

    pre = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trained = _trained(pre, vocab_size, pre_tokenizers.ByteLevel.alphabet())
    first = len(trained["vocab"])
    added = [_added(first + k, s) for k, s in enumerate(specials)]
    return trained, added


def llama3_folder(folder: Path) -> Path:
    """Llama 3 (meta-llama/Meta-Llama-3-8B-Instruct's layout): byte-level BPE after a regex
    Split, post-processor ByteLevel + TemplateProcessing adding ``<|begin_of_text|>``, the
    header / eot chat tokens, tokenizer_class PreTrainedTokenizerFast, no add_bos_token key."""
    trained, added = _byte_bpe(LLAMA3_SPLIT, 400, LLAMA3_SPECIAL)
    trained["ignore_merges"] = True
    bos_id = added[0]["id"]
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [_split(LLAMA3_SPLIT), _byte_level(use_regex=False)],
        },
        "post_processor": {
            "type": "Sequence",
            "processors": [
                _byte_level(add_prefix_space=True, trim_offsets=False, use_regex=True),
                _template("<|begin_of_text|>", bos_id),
            ],
        },
        "decoder": _byte_level(add_prefix_space=True, use_regex=True),
        "model": trained,
    }
    config = {
        "added_tokens_decoder": {str(a["id"]): _decoder_entry(a["content"]) for a in added},
        "bos_token": "<|begin_of_text|>",
        "chat_template": LLAMA3_CHAT,
        "clean_up_tokenization_spaces": True,
        "eos_token": "<|eot_id|>",
        "model_input_names": ["input_ids", "attention_mask"],
        "model_max_length": 1000000000000000019884624838656,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    special_map = {
        "bos_token": _map_entry("<|begin_of_text|>"),
        "eos_token": _map_entry("<|eot_id|>"),
    }
    return _write(folder, tokenizer, config, special_map)


def qwen2_folder(folder: Path) -> Path:
    """Qwen2 / Qwen2.5 (Qwen/Qwen2.5-0.5B-Instruct's layout): NFC, regex Split, byte-level
    BPE, no BOS at all (bos_token null), ``<|im_start|>`` / ``<|im_end|>`` chat tokens."""
    trained, added = _byte_bpe(QWEN2_SPLIT, 400, QWEN2_SPECIAL)
    plain = {"add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [_split(QWEN2_SPLIT), {"type": "ByteLevel", **plain}],
        },
        "post_processor": {"type": "ByteLevel", **plain},
        "decoder": {"type": "ByteLevel", **plain},
        "model": trained,
    }
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {str(a["id"]): _decoder_entry(a["content"]) for a in added},
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None,
        "chat_template": QWEN2_CHAT,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }
    special_map = {
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "eos_token": _map_entry("<|im_end|>"),
        "pad_token": _map_entry("<|endoftext|>"),
    }
    return _write(folder, tokenizer, config, special_map)


#: Texts every tokenizer is compared on: plain, a newline, an unknown character (byte
#: fallback / bytes), and each family's chat tokens typed literally.
PLAIN_TEXTS = (
    "The cat sat on the mat because it was tired.",
    "queries  meet keys\nand values 123",
    "naïve café ☕",
)
CHAT_TEXTS = {
    "llama2": ("[INST] Where is the cat? [/INST] On the mat. </s>",),
    "llama3": (
        "<|start_header_id|>user<|end_header_id|>\n\nWhere is the cat?<|eot_id|>",
        "<|start_header_id|>assistant<|end_header_id|>\n\nOn the mat.<|eot_id|>",
    ),
    "qwen2": ("<|im_start|>user\nWhere is the cat?<|im_end|>\n<|im_start|>assistant\n",),
}
#: A chat text with the BOS typed at its start (as a rendered chat template begins).
BOS_TEXTS = {
    "llama2": "<s>[INST] Where is the cat? [/INST]",
    "llama3": "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
}
