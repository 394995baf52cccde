"""Which head and query the walkthrough follows, and how that survives the learner's changes.

The rule (no Qt; the walkthrough panel only feeds it events):

- The learner's choice wins: a head chosen anywhere (the heads grid, the head box, the model
  overview) is the head followed from the next step on; a token chosen in the token strip,
  or a cell or row chosen in a view, is the query followed (a cell also fixes the key).
- An example that names a query and key (``{"focus": {"query": "it", "key": "cat"}}``)
  opens on them, in the head that ties them most.
- Otherwise the walkthrough picks an informative query itself
  (:func:`~attention_explorer.walkthrough.focus.choose_focus`), never a special token such
  as [CLS], [SEP] or BOS.
- Editing numbers or adding / removing / renaming a token keeps the followed query: the
  same token (by position among equal names), wherever it moved to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Followed:
    """The head and the (query row, key column) followed, who chose them, and the tokens the
    row indexes. ``row``/``col`` None: let the walkthrough choose. ``by``: "you", "example"
    or "walkthrough". ``key_chosen``: the learner fixed the key too (a cell, not a token).
    ``head_chosen``: the learner chose the head (an example's own head no longer applies)."""

    head: int | None = None
    row: int | None = None
    col: int | None = None
    by: str = "walkthrough"
    tokens: tuple[str, ...] = ()
    key_chosen: bool = False
    head_chosen: bool = False

    def with_head(self, head: int) -> Followed:
        """The learner chose ``head``: same query; its key is that head's favourite again
        unless the learner fixed the key."""
        col = self.col if self.key_chosen else None
        return replace(self, head=head, col=col, head_chosen=True)

    def with_query(self, row: int, tokens: Sequence[str], col: int | None = None) -> Followed:
        """The learner chose query ``row`` (and key ``col`` when a cell was chosen)."""
        return replace(
            self, row=row, col=col, by="you", tokens=tuple(tokens), key_chosen=col is not None
        )

    def on_tokens(self, tokens: Sequence[str]) -> Followed:
        """The token list changed to ``tokens``: the followed query moves with its token."""
        tokens = tuple(tokens)
        if self.row is None or tokens == self.tokens:
            return replace(self, tokens=tokens)
        row = remap_row(self.tokens, tokens, self.row)
        if row is None:
            return Followed(head=self.head, tokens=tokens)
        col = self.col if self.col is not None and self.col < len(tokens) else None
        return replace(self, row=row, col=col, tokens=tokens, key_chosen=col is not None)


def remap_row(old: Sequence[str], new: Sequence[str], row: int) -> int | None:
    """Where token ``old[row]`` is in ``new``: after a token was added or removed, renamed,
    or the list is unchanged up to ``row``. None when it cannot be told (then choose again).

    The common prefix and suffix of the two lists are matched; a row inside the prefix keeps
    its index, a row inside the suffix keeps its distance from the end, and a renamed token
    (same length, one name differs) keeps its index.
    """
    old, new = tuple(old), tuple(new)
    if not 0 <= row < len(old):
        return None
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    if row < prefix:
        return row
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    if row >= len(old) - suffix:
        return len(new) - (len(old) - row)
    if len(old) == len(new):  # the followed token itself was renamed: follow its place
        return row
    return None


def _example_cell(experiment) -> tuple[int | None, int | None]:
    """The cell an example asks to follow (``experiment["focus"]`` with row/col), if any."""
    focus = experiment.get("focus") if isinstance(experiment, dict) else None
    if not isinstance(focus, dict):
        return None, None
    row, col = focus.get("row"), focus.get("col")
    return (row if isinstance(row, int) else None, col if isinstance(col, int) else None)


def session_steps(trace, document, follow: Followed | None = None):
    """The walkthrough of ``document`` (a Session or SessionData: name, description, notes,
    experiment) on ``trace``, following ``follow``; returns (steps, the Followed now).

    The one place where the rule of this module's doc is applied: the window's walkthrough
    and the handout (``attention-explorer handout``) both call it, so they tell one story.
    """
    from attention_explorer.pretrained.focus import focus_for
    from attention_explorer.walkthrough.narration import steps_for

    follow = (follow or Followed()).on_tokens(trace.tokens)  # an added token keeps the query
    notes = tuple(document.notes)
    named = focus_for(trace, document.experiment)  # an example that names tokens to follow
    if named is not None:
        notes = (*notes, ("From the live numbers", named.sentence))
    row, col, head, by = follow.row, follow.col, follow.head, follow.by
    if row is None and named is not None:
        row, col, by = named.row, named.col, "example"
        head = head if follow.head_chosen and head is not None else named.head
    elif row is None:
        (row, col), by = _example_cell(document.experiment), "example"
    steps = steps_for(
        trace,
        row,
        col,
        head=head,
        name=document.name,
        description=document.description,
        notes=notes,
        chosen_by=by,
    )
    scores = next((st for st in steps if st.key == "scores"), None)
    if scores is not None:  # from now on the focus is kept (or still the learner's)
        (row, col) = scores.cells[0]
        # A head the learner chose stays chosen even while a trace without it is shown.
        head = follow.head if follow.head_chosen else scores.head
        kept = by if by == "you" else "walkthrough"
        col = col if follow.key_chosen else None
        follow = replace(follow, head=head, row=row, col=col, by=kept)
    return steps, follow
