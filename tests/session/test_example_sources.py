"""Examples name their tutorials by title and section; no internal reference reaches a user."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.json"))
#: The tutorials' titles: the first line of each tutorial's text.
TITLES = {
    "How Transformers Think: Self-Attention and Multi-Head Attention from First Principles",
    "Attention Mechanism: The Heart of Transformers",
    "Self-attention mechanism explained",
    "Attention 101 : Self-Attention, Multi-Head & Single-Head Attention",
}
#: How internal references read: a numbered tutorial ("seed 001"), a tracker item, a path.
INTERNAL = re.compile(r"\bseeds?\s+0\d\d\b|\bissues?\s*#?\s*\d+|\bseeds/|\bitem\s+\d+\)|§", re.I)


def _strings(value):
    """Every string inside a JSON value (numbers and keys left out)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _visible(doc: dict):
    """The user-visible texts of an example: name, description, tokens, notes, experiment."""
    for key in ("name", "description", "tokens", "kv_tokens", "notes", "experiment"):
        yield from _strings(doc.get(key, ""))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_no_internal_reference_in_what_an_example_shows(path):
    doc = json.loads(path.read_text("utf-8"))
    found = [text for text in _visible(doc) if INTERNAL.search(text)]
    assert not found, f"{path.name}: {found[0]!r}"


def test_the_scan_would_catch_the_old_wording():
    for old in ("seed 001, section 4", "issue 12, worked example (item 5)", "Seed 000 §5.4"):
        assert INTERNAL.search(old)
    assert not INTERNAL.search("drawn with NumPy's seed 7 in the tutorial's order")


def test_every_tutorial_example_names_its_title_and_section_in_the_notes():
    cited = 0
    for path in EXAMPLES:
        doc = json.loads(path.read_text("utf-8"))
        source = doc["experiment"].get("source")
        if source is None:
            continue
        cited += 1
        title = source[1:].partition("”")[0]
        assert source.startswith("“") and title in TITLES, source
        section = source.partition("”, ")[2]
        assert section, source
        first = doc["notes"][0]
        assert first["title"] == "Where this example comes from"
        assert title in first["text"] and section in first["text"]
    assert cited >= 20


def test_no_internal_reference_in_the_example_tools_docstrings():
    for path in sorted((ROOT / "tools").glob("*example*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        nodes = [tree, *ast.walk(tree)]
        for node in nodes:
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)):
                text = ast.get_docstring(node) or ""
                assert not INTERNAL.search(text), f"{path.name}: {text[:80]!r}"
        comments = [line for line in path.read_text("utf-8").splitlines() if "#" in line]
        assert not [c for c in comments if INTERNAL.search(c)], path.name
