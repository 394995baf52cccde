"""Tokenizing within bounds: a tokenizer.json is code (regular expressions, replacements),
and a hostile one must not hang the app, exhaust its memory or abort it.

Before a tokenizer is used, its normalizer, pre-tokenizer and model are read
(:func:`unbounded_reason`, from the loaded tokenizer's own components: the vocabulary is not
serialised). A tokenizer whose every part is known to run in time and memory in proportion
to the text (BERT's, GPT-2's byte level, Llama's and Qwen's split regexes, SentencePiece's
replacements…) encodes in this process, as before: no cost. Any other (a regex with a
quantified group of alternatives or quantifiers, which can backtrack for ever, such as
``(a|aa)+$``; a replacement that multiplies the text; a normalizer whose expansion cannot be
read, such as ``Precompiled``; a back-reference) encodes in a worker process with a time budget
(:data:`TIME_BUDGET_S`) and a memory budget (:data:`MEMORY_BUDGET`, ``RLIMIT_AS``): past either,
the worker is ended and the text refused in one line naming the tokenizer and why it was run
apart. A Rust panic inside tokenizers (``pyo3_runtime.PanicException``, a BaseException, as an
Oniguruma retry limit raises) becomes a :class:`ModelError` wherever it happens.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from attention_explorer.pretrained.model_errors import ModelError, is_panic

#: Seconds a worker may take to load the tokenizer and encode one text.
TIME_BUDGET_S = 20.0
#: Address space a worker may use (bytes), beside what loading the tokenizer needs.
MEMORY_BUDGET = 1536 << 20
#: The most a text may grow by normalizing, in this process (NFKC's worst is 18x).
MAX_EXPANSION = 64

_NORMALIZERS = {"BertNormalizer", "Lowercase", "NFC", "NFD", "Strip", "StripAccents", "Nmt"}
_NORMALIZERS_X18 = {"NFKC", "NFKD"}  # a compatibility decomposition: at most 18 characters
_PRE_TOKENIZERS = {
    "ByteLevel",
    "BertPreTokenizer",
    "Whitespace",
    "WhitespaceSplit",
    "Punctuation",
    "Digits",
    "Metaspace",
    "CharDelimiterSplit",
    "UnicodeScripts",
    "FixedLength",
}
_MODELS = {"BPE", "WordLevel", "Unigram", "WordPiece"}
#: WordPiece tries every prefix of a word: at most this long a word, in this process.
MAX_WORDPIECE_CHARS = 1000
_CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
_TAIL = r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_UPPER, _LOWER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
#: The split regexes real tokenizers ship (GPT-2's, Llama 3's and tiktoken's cl100k, Qwen2's,
#: tiktoken's o200k): run in this process. Any other regex runs in a worker: whether a regex
#: can backtrack for a long time cannot be told in general (``\w*\w*\w*\W`` is polynomial,
#: ``(a|aa)+$`` exponential until Oniguruma's retry limit panics).
KNOWN_SPLIT_REGEXES = frozenset(
    {
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
        _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|" + _TAIL,
        _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|" + _TAIL,
        rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+{_CONTRACTIONS}?|[^\r\n\p{{L}}\p{{N}}]?"
        rf"{_UPPER}+{_LOWER}*{_CONTRACTIONS}?|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*"
        r"|\s*[\r\n]+|\s+(?!\S)|\s+",
    }
)


# -- reading the components ----------------------------------------------------------------
def _state(part) -> object:
    """A tokenizer component's JSON (its ``__getstate__``), or ``"unreadable"``."""
    if part is None:
        return None
    try:
        return json.loads(part.__getstate__())
    except Exception:  # noqa: BLE001 - a component we cannot read is run apart
        return "unreadable"


def regex_risk(pattern: str) -> str | None:
    """Why the regular expression ``pattern`` may backtrack without bound (a quantified group
    holding an alternation or a quantifier, as ``(a|aa)+`` or ``(a+)*``; a back-reference),
    or None when it cannot: every regex real tokenizers ship passes."""
    groups: list[dict] = []  # open groups: does each hold "|" or a quantifier?
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            following = pattern[i + 1 : i + 2]
            if following.isdigit() and following != "0" or following == "k":
                return "a back-reference"
            i += 2
            if following in "pP" and pattern[i : i + 1] == "{":
                i = pattern.find("}", i) + 1 or n
            continue
        if char == "[":
            i = _class_end(pattern, i)
            continue
        if char == "(":
            groups.append({"busy": False})
            i += 1
            if pattern[i : i + 1] == "?":  # (?:  (?i:  (?=  (?!  (?<=  (?<!  (?<name>
                i += 1
            continue
        if char == ")":
            inner = groups.pop() if groups else {"busy": False}
            i += 1
            repeat = _repeats(pattern, i)
            if repeat and inner["busy"]:
                return "a repeated group of alternatives or repeats"
            if groups and (inner["busy"] or repeat):
                groups[-1]["busy"] = True
            continue
        if char == "|" and groups:
            groups[-1]["busy"] = True
        elif char in "*+{" and groups:
            groups[-1]["busy"] = True
        i += 1
    return None


def _regex_why(pattern: str) -> str:
    risk = regex_risk(pattern)
    return f"has {risk}" if risk else "is not one known to run in bounded time"


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at ``i`` (nested classes, escapes)."""
    depth, i = 0, i
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


_BOUND = re.compile(r"\{(\d*)(,?)(\d*)\}")


def _repeats(pattern: str, i: int) -> bool:
    """Whether a quantifier allowing more than one repetition starts at ``i``."""
    char = pattern[i : i + 1]
    if char in ("*", "+"):
        return True
    bound = _BOUND.match(pattern, i) if char == "{" else None
    if bound is None:
        return False
    low, comma, high = bound.groups()
    return bool(comma) and (not high or int(high) > 1) or (not comma and int(low or 1) > 1)


def _pattern(part: dict) -> tuple[str, str]:
    pattern = part.get("pattern") or {}
    if isinstance(pattern, dict) and "Regex" in pattern:
        return "Regex", str(pattern["Regex"])
    if isinstance(pattern, dict) and "String" in pattern:
        return "String", str(pattern["String"])
    return "unknown", ""


def _normalizer_growth(part) -> tuple[float, str | None]:
    """(how many times the text may grow, why it cannot be bounded or None)."""
    if part is None:
        return 1.0, None
    if not isinstance(part, dict):
        return 1.0, "its normalizer cannot be read"
    kind = part.get("type")
    if kind == "Sequence":
        growth = 1.0
        for inner in part.get("normalizers") or []:
            factor, why = _normalizer_growth(inner)
            if why:
                return growth, why
            growth *= factor
        return growth, None
    if kind in _NORMALIZERS:
        return 1.0, None
    if kind in _NORMALIZERS_X18:
        return 18.0, None
    if kind in ("Prepend", "Append"):
        return 1.0 + len(str(part.get(kind.lower(), ""))), None
    if kind == "Replace":
        how, pattern = _pattern(part)
        content = len(str(part.get("content", "")))
        if how == "String" and pattern:
            return max(1.0, content / len(pattern)), None
        if how == "Regex":
            return 1.0, f"its Replace normalizer's regex {pattern[:40]!r} {_regex_why(pattern)}"
        return 1.0, "its Replace normalizer has no pattern"
    return 1.0, f"its {kind} normalizer's growth cannot be bounded"


def _pre_tokenizer_risk(part) -> str | None:
    if part is None:
        return None
    if not isinstance(part, dict):
        return "its pre-tokenizer cannot be read"
    kind = part.get("type")
    if kind == "Sequence":
        risks = [_pre_tokenizer_risk(p) for p in part.get("pretokenizers") or []]
        return next((r for r in risks if r), None)
    if kind in _PRE_TOKENIZERS:
        return None
    if kind == "Split":
        how, pattern = _pattern(part)
        if how == "String":
            return None
        if how != "Regex":
            return "its Split pre-tokenizer has no pattern"
        if pattern in KNOWN_SPLIT_REGEXES:
            return None
        return f"its Split regex {pattern[:40]!r} {_regex_why(pattern)}"
    return f"its {kind} pre-tokenizer is not one known to run in bounded time"


def unbounded_reason(tokenizer) -> str | None:
    """Why ``tokenizer`` (a ``tokenizers.Tokenizer``) cannot be trusted to encode in time
    and memory proportional to the text, or None when it can (see the module docstring)."""
    growth, why = _normalizer_growth(_state(getattr(tokenizer, "normalizer", None)))
    if why:
        return why
    if growth > MAX_EXPANSION:
        return f"its normalizer can make a text {growth:,.0f} times longer"
    why = _pre_tokenizer_risk(_state(getattr(tokenizer, "pre_tokenizer", None)))
    if why:
        return why
    model = getattr(tokenizer, "model", None)
    kind = type(model).__name__
    if kind not in _MODELS:
        return f"its {kind} model is not one known to run in bounded time"
    chars = getattr(model, "max_input_chars_per_word", 0) if kind == "WordPiece" else 0
    if isinstance(chars, int) and chars > MAX_WORDPIECE_CHARS:
        return f"its WordPiece model reads words of up to {chars:,} characters"
    return None


# -- encoding ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Encoded:
    """What an encoding gives the app (as ``tokenizers.Encoding``'s attributes)."""

    ids: list[int]
    tokens: list[str]
    type_ids: list[int]
    special_tokens_mask: list[int]


_WORKER = r"""
import json, os, resource, sys
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from tokenizers import Tokenizer
request = json.loads(sys.stdin.read())
try:
    tok = Tokenizer.from_file(sys.argv[1])
    tok.no_padding()
    tok.no_truncation()
    e = tok.encode(request["text"], add_special_tokens=request["special"])
    out = {"ids": e.ids, "tokens": e.tokens, "type_ids": e.type_ids,
           "special_tokens_mask": e.special_tokens_mask}
except MemoryError:
    sys.exit(3)
except BaseException as exc:
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise
    out = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
sys.stdout.write(json.dumps(out))
"""


def encode_apart(path: Path, text: str, special: bool, why: str) -> Encoded:
    """``text`` encoded by the tokenizer.json at ``path`` in a worker process within
    :data:`TIME_BUDGET_S` and :data:`MEMORY_BUDGET` (plus 16 times the file's size); a
    ModelError naming the tokenizer and ``why`` it runs apart when it goes past either."""
    limit = MEMORY_BUDGET + 16 * path.stat().st_size
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _WORKER, str(path), str(limit)],
            input=json.dumps({"text": text, "special": bool(special)}).encode("utf-8"),
            capture_output=True,
            timeout=TIME_BUDGET_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ModelError(
            "tokenizer",
            f"the tokenizer {path} took more than {TIME_BUDGET_S:g} s on this text and was "
            f"stopped ({why}); refused",
        ) from None
    except OSError as exc:
        raise ModelError("tokenizer", f"could not start a tokenizer worker: {exc}") from None
    if done.returncode != 0 or not done.stdout:
        raise ModelError(
            "tokenizer",
            f"the tokenizer {path} needed more than its {limit >> 20:,} MB on this text and "
            f"was stopped ({why}); refused",
        )
    result = json.loads(done.stdout)
    if "error" in result:
        raise ModelError("tokenizer", f"the tokenizer {path} failed: {result['error']}")
    return Encoded(**result)


class BoundedTokenizer:
    """A ``tokenizers.Tokenizer`` whose :meth:`encode` is bounded (see the module docstring);
    every other attribute is the tokenizer's own. ``unbounded`` says why it encodes in a
    worker (None: in this process); ``type_vocab`` is config.json's ``type_vocab_size``."""

    def __init__(self, inner, path: Path, unbounded: str | None, type_vocab: int | None = None):
        self.inner, self.path, self.unbounded, self.type_vocab = inner, path, unbounded, type_vocab

    def encode(self, text: str, add_special_tokens: bool = True):
        """The encoding of ``text``: in this process when it is bounded, else in a worker."""
        if self.unbounded is not None:
            return encode_apart(self.path, text, add_special_tokens, self.unbounded)
        try:
            return self.inner.encode(text, add_special_tokens=add_special_tokens)
        except BaseException as exc:
            if not is_panic(exc):
                raise
            raise ModelError("tokenizer", f"the tokenizer {self.path} failed: {exc}") from None

    def __getattr__(self, name: str):
        return getattr(self.inner, name)
