"""Nothing the command line prints can drive the terminal: control characters come out escaped.

Named cases put escape sequences, bells, carriage returns, C1 controls, bidirectional overrides
and line separators into session names, token names, file names and a model's tokenizer, then
run the commands that print them. Every character of stdout and stderr is then printable (or a
newline or tab), and the escaped form (``\\x1b``) is there instead.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, strategies as st
from outputs import ESCAPE_TOKEN

import attention_explorer as ae
from attention_explorer.cli import main
from attention_explorer.cli.terminal_text import terminal_text

HOSTILE_NAME = "\x1b[2J\x1b]0;title\x07ev\u202eil\x9b31m\r\x7f"
HOSTILE_TOKENS = ("\x1b[31mred", "bell\x07", "back\rspace", "line\u2028sep")


def _session_file(tmp_path):
    data = ae.example("starter").with_changes(name=HOSTILE_NAME, tokens=HOSTILE_TOKENS)
    return str(ae.save(data, tmp_path / "hostile.json"))


def _unsafe(text: str) -> list[str]:
    """Characters that would act on a terminal rather than show."""
    return [
        c
        for c in text
        if c not in "\n\t" and unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp", "Cs", "Co"}
    ]


CASES = {
    "compute-summary-session-name-and-tokens": (
        lambda t, m: ["compute", _session_file(t)],
        0,
        "\\x1b[2J",
    ),
    "explain-token-names": (
        lambda t, m: ["explain", _session_file(t), "--cell", "0,1"],
        0,
        "\\x1b[31mred",
    ),
    "export-written-paths": (
        lambda t, m: ["export", _session_file(t), "--format", "csv", "--out", str(t / "o\x1bx")],
        0,
        "o\\x1bx",
    ),
    "error-missing-file-name": (
        lambda t, m: ["compute", str(t / "\x1b[2Jgone\x07.json")],
        2,
        "\\x1b[2Jgone\\x07",
    ),
    "error-out-folder-with-bidi-name": (
        lambda t, m: ["compute", "--example", "starter", "--out", str(t / "no\u202efolder/x.npz")],
        2,
        "\\u202e",
    ),
    "error-unknown-example": (
        lambda t, m: ["compute", "--example", "\x1b[31mnope\x9b"],
        2,
        "nope",
    ),
    "argparse-invalid-choice": (
        lambda t, m: ["compute", "--example", "starter", "--dtype", "\x1b[2J"],
        2,
        "\\x1b[2J",
    ),
    "model-token-list": (
        lambda t, m: ["model", "--model", str(m), "--text", f"hello {ESCAPE_TOKEN} world"],
        0,
        "\\x1b[2J\\x1b[31mpwned\\x07",
    ),
    "model-text-error": (
        lambda t, m: ["model", "--model", str(m), "--text", "\x1b[5m" * 2000],
        2,
        "characters",
    ),
    "model-out-written-line": (
        lambda t, m: ["model", "--model", str(m), "--text", "hello", "--out", str(t / "\x07.json")],
        0,
        "\\x07.json",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_text_is_escaped(name, tmp_path, tiny_model, capsys):
    argv, code, escaped = CASES[name]
    try:
        result = main(argv(tmp_path, tiny_model))
    except SystemExit as exc:  # argparse's own error exit
        result = exc.code
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert result == code, printed
    assert _unsafe(printed) == []
    assert escaped in printed
    if code == 2:
        assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in printed


@given(st.text())
def test_terminal_text_leaves_nothing_that_acts_on_a_terminal(text):
    shown = terminal_text(text)
    assert _unsafe(shown) == []
    assert shown.count("\n") == text.count("\n")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl"))))
def test_printable_text_is_unchanged(text):
    assert terminal_text(text.replace("\u2029", "")) == text.replace("\u2029", "")
