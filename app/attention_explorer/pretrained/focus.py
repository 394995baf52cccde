"""Which heads send one token's attention to another, read from live numbers (a Trace).

The worked example follows "it" in "The cat sat on the mat because it was tired." and says
which heads put the most weight on "cat": :func:`focus_sentence` builds that sentence from
whatever the weights are now, so an edit changes the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from attention_explorer.core.numbers import format_number
from attention_explorer.engine import Trace

#: Marks tokenizers put on word pieces: BERT's "##" continuation, GPT-2's "Ġ" space.
_MARKS = ("##", "Ġ", "▁")


def _plain(token: str) -> str:
    for mark in _MARKS:
        token = token.replace(mark, "")
    return token.strip().lower()


def find_token(tokens: Sequence[str], word: str) -> int | None:
    """Index of the first token that spells ``word`` (case and piece marks ignored)."""
    wanted = _plain(word)
    return next((i for i, t in enumerate(tokens) if _plain(t) == wanted), None)


@dataclass(frozen=True)
class HeadWeight:
    """One head's weight from the query token onto the key token."""

    head: int
    weight: float


def heads_attending(trace: Trace, query: str, key: str) -> list[HeadWeight]:
    """Every computed head's weight from token ``query`` onto token ``key``, largest first.

    Empty when either token is not in the sentence or the weights were not computed.
    """
    weights = trace.stages.get("weights")  # [s, n, m]
    i, j = find_token(trace.tokens, query), find_token(trace.kv_tokens, key)
    if weights is None or i is None or j is None:
        return []
    found = [HeadWeight(h, float(weights[s, i, j])) for s, h in enumerate(trace.heads)]
    return sorted(found, key=lambda hw: (-hw.weight, hw.head))


def focus_sentence(trace: Trace, query: str = "it", key: str = "cat", top: int = 3) -> str:
    """A sentence naming the heads that put the most weight from ``query`` onto ``key``."""
    ranked = heads_attending(trace, query, key)
    if not ranked:
        return f"The sentence has no “{query}” or no “{key}” token to follow."
    best = ranked[:top]
    names = ", ".join(
        f"head {hw.head} ({format_number(hw.weight, 2, display=True)})" for hw in best
    )
    lead = best[0]
    share = "most of its attention" if lead.weight > 0.5 else "the largest share it gives"
    return (
        f"Following “{query}”: the heads that put the most weight on “{key}” are {names}. "
        f"In head {lead.head}, “{key}” gets {share} "
        f"({format_number(lead.weight * 100, 0, display=True)}% of the row of “{query}”)."
    )


@dataclass(frozen=True)
class Focus:
    """Where the walkthrough should look for an example with ``experiment["focus"]``: the
    query row, the key column, the head with most weight there, and the sentence to show."""

    row: int
    col: int
    head: int
    sentence: str


def focus_for(trace: Trace, experiment: dict) -> Focus | None:
    """The walkthrough focus an example asks for (``{"focus": {"query": "it", "key": "cat"}}``),
    computed from ``trace`` (the live numbers); None when it asks for none or a token is absent.
    """
    wanted = experiment.get("focus") if isinstance(experiment, dict) else None
    if not isinstance(wanted, dict):
        return None
    query, key = str(wanted.get("query", "")), str(wanted.get("key", ""))
    ranked = heads_attending(trace, query, key)
    if not ranked:
        return None
    row, col = find_token(trace.tokens, query), find_token(trace.kv_tokens, key)
    return Focus(row, col, ranked[0].head, focus_sentence(trace, query, key))
