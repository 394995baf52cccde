"""How the matrix editor names what it shows: the slice (``Q (head 1)``, ``W_Q``), its rows
(token names, or a head's dimensions), its columns (``h0.1`` per head) and one cell
(``X[cat, 3]``), with the longer meaning each tooltip gives. Qt-free: it reads the session's
tokens and config as they are at each call."""

from __future__ import annotations

#: Arrays whose rows are the query tokens / the key tokens.
QUERY_ROW_ARRAYS = ("Q", "X")
KEY_ROW_ARRAYS = ("K", "V", "X_kv")
#: Arrays whose columns are grouped per head (query heads / key-value heads).
HEAD_COLUMN_ARRAYS = {"W_Q": "query", "W_K": "kv", "W_V": "kv"}


def head_dim_label(k: int, width: int) -> str:
    """Column (or row) ``k`` of a per-head block of ``width`` named head.dimension: ``h1.0``."""
    width = max(1, width)
    return f"h{k // width}.{k % width}"


class SliceLabels:
    """The names of the slice ``name`` (``[head]`` of it when ``head`` is given) of
    ``session.inputs``, of its rows, columns and cells."""

    def __init__(self, session, name: str, head: int | None):
        self.session, self.name, self.head = session, name, head

    def slice_label(self) -> str:
        """How the slice is named in messages and undo labels: ``Q (head 1)``, ``W_Q``."""
        if self.head is None:
            return self.name
        return f"{self.name} ({self.head_kind(self.name in ('K', 'V'))} {self.head})"

    def cell_label(self, i: int, j: int) -> str:
        """A cell named as the editor labels it: ``X[cat, 3]``, ``Q (head 1)[t3, 0]``."""
        return f"{self.slice_label()}[{self.row_label(i)}, {self.column_label(j)}]"

    def head_kind(self, key_value: bool) -> str:
        """ "kv head" for K, V and their weights when heads share them (grouped-query
        attention), else "head": without sharing the kv heads are the heads."""
        return "kv head" if key_value and self.session.config.kv_group > 1 else "head"

    def row_tokens(self) -> tuple[str, ...] | None:
        """The tokens the rows stand for (queries or keys); None when rows are dimensions."""
        if self.name in QUERY_ROW_ARRAYS:
            return self.session.tokens
        if self.name == "X_kv":
            return self.session.kv_tokens
        if self.name in KEY_ROW_ARRAYS:
            return self.session.key_tokens
        return None

    def row_label(self, i: int) -> str:
        """Row ``i``'s header: its token, ``h0.1`` for W_O, else its number."""
        tokens = self.row_tokens()
        if tokens is not None:
            return tokens[i] if i < len(tokens) else str(i)
        if self.name == "W_O":
            return head_dim_label(i, self.session.config.value_dim)
        return str(i)

    def row_meaning(self, i: int) -> str:
        """Row ``i`` in words, for tooltips: ``token 2 'cat'``, ``input dimension 3``."""
        tokens = self.row_tokens()
        if tokens is not None:
            name = tokens[i] if i < len(tokens) else "?"
            kind = "key token" if self.name in KEY_ROW_ARRAYS else "token"
            return f"{kind} {i} '{name}'"
        if self.name == "W_O":
            width = self.session.config.value_dim
            return f"head {i // width}, value dimension {i % width}"
        return f"input dimension {i}" if self.name.startswith("W_") else f"row {i}"

    def column_label(self, j: int) -> str:
        """Column ``j``'s header: ``h0.1`` for the per-head projections, else its number."""
        if self.name in HEAD_COLUMN_ARRAYS:
            return head_dim_label(j, self._head_width())
        return str(j)

    def column_meaning(self, j: int) -> str:
        """Column ``j`` in words, for tooltips: ``kv head 0, dimension 1``."""
        if self.name in HEAD_COLUMN_ARRAYS:
            width = self._head_width()
            kind = self.head_kind(HEAD_COLUMN_ARRAYS[self.name] != "query")
            return f"{kind} {j // width}, dimension {j % width}"
        if self.name == "W_O":
            return f"output dimension {j}"
        return f"dimension {j}"

    def _head_width(self) -> int:
        config = self.session.config
        return config.value_dim if self.name == "W_V" else config.head_dim
