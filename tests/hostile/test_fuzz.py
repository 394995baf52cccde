"""Fuzz: valid session files, mutated, either load or raise SessionFileError, quickly.

Mutations: swap a value's JSON type, put in a huge integer, a string, a null or a deeply
nested list, drop a key, add a key; one to three of them per file. A loaded session must also
survive a save-and-load round trip unchanged.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from attention_explorer.session import SessionFileError, loads_session
from attention_explorer.session.examples import example_path, list_examples
from attention_explorer.session.file_format import dumps_session, session_to_dict
from attention_explorer.session.starter import starter_session

SAMPLE = Path(__file__).parents[1] / "sample_session.json"
#: Replaced, after json.dumps, by text json cannot make (numbers too big, very deep brackets).
RAW = {
    "@@BIG@@": "1" + "0" * 400,
    "@@HUGE@@": "-9" * 2600,
    "@@DEEP@@": "[" * 100_000 + "]" * 100_000,
    "@@E400@@": "1e400",
}
SEEDS = [
    json.loads(SAMPLE.read_text()),
    session_to_dict(starter_session()),
    *(json.loads(example_path(e.key).read_text()) for e in list_examples()[:4]),
]


def paths(node, prefix=()):
    """Every (path) to a value in ``node``, lists sampled at their first two and last items."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(node, list):
        for k in sorted({0, 1, len(node) - 1} & set(range(len(node)))):
            yield from paths(node[k], (*prefix, k))


REPLACEMENTS = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1.5, "", "false", "1", [], {}, [[]], [None]]),
    st.sampled_from(sorted(RAW)),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.integers(min_value=2, max_value=300).map(
        lambda depth: json.loads("[" * depth + "]" * depth)
    ),
    st.lists(st.integers(-3, 3), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@st.composite
def mutated_documents(draw) -> str:
    """The text of a seed session with one to three mutations."""
    doc = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(list(paths(doc))))
        kind = draw(st.sampled_from(["replace", "drop", "add"]))
        if not where:
            doc = draw(REPLACEMENTS) if kind == "replace" else doc
            continue
        parent = doc
        for step in where[:-1]:
            parent = parent[step]
        last = where[-1]
        if kind == "replace":
            parent[last] = draw(REPLACEMENTS)
        elif kind == "drop":
            del parent[last]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "mode", "heads", "try", "d_model", "X"]))] = draw(
                REPLACEMENTS
            )
        else:
            parent.append(draw(REPLACEMENTS))
        if not isinstance(doc, (dict, list)):
            break
    text = json.dumps(doc)
    for marker, raw in RAW.items():
        text = text.replace(json.dumps(marker), raw)
    return text


@settings(
    max_examples=300,
    deadline=2000,  # ms per file: validation is O(size) and the budget refuses big work
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated_documents())
def test_mutated_files_load_or_raise_the_documented_error(text):
    try:
        data = loads_session(text)
    except SessionFileError as exc:
        assert str(exc).strip() and "\n" not in str(exc)
        return
    assert loads_session(dumps_session(data)) == data
