"""WeightedSumView: the weighted-sum step as a pair view, the weights and V side by side.

One number of the followed query's output, ``output[i, c]``, is the dot product of its weight
row with column ``c`` of V: the weights ``w`` (one per key), that column ``v`` (V on screen
even where the stage column cannot show it beside the output), their products as bars and
their sum. In direct mode a V entry can be dragged or typed (one undo step), and the output
moves; the weights are computed, so they are not edited here. Numbers are read from the trace
and the engine's :func:`~attention_explorer.engine.explain`.
"""

from __future__ import annotations

from attention_explorer.engine import explain
from attention_explorer.ui.pipeline.dot_product_canvas import shown_number
from attention_explorer.ui.pipeline.dot_product_view import DotProductView

#: Keys shown at most (the first ones); a long row says how many more there are.
MAX_KEYS = 64


class WeightedSumView(DotProductView):
    """``output[row, col]`` of ``head`` as the weight row · column ``col`` of V."""

    TYPED = "V"

    def source_text(self) -> str:
        """Where v comes from when it cannot be typed here (one short line)."""
        return "v = x·W_V; w: the softmax"

    def source_tip(self) -> str:
        """The source line's whole sentence (its tooltip)."""
        return (
            "Here v is computed: v = x·W_V from the embeddings X, and the weights come from "
            "the softmax step. Edit X or W_V, or switch to typing Q, K and V directly."
        )

    def editable_rows(self) -> tuple[int, ...]:
        """Only v (row 1), and only when V is typed (direct mode)."""
        return (1,) if self.editable() else ()

    def numbers(self) -> dict[str, float]:
        """The output number shown (read from the trace)."""
        head, i, c = self.pair
        return {"output": float(self.live.trace.stage("head_outputs", head)[i, c])}

    def _edit_target(self, trace, which: int, component: int):
        if which not in self.editable_rows():
            return None
        head, _i, c = self.pair
        return "V", (self._slot(trace, head, 1), component, c), trace.kv_tokens[component]

    def _box_tip(self, row: int, editable: bool) -> str:
        if editable:
            return "Type a new value of V (Enter): the output follows"
        if row == 0:
            return "The weights come from the softmax step: change a score to change them"
        return "V is X·W_V here: edit X or W_V, or type Q, K and V directly"

    def _on_trace(self, trace) -> None:
        if trace is None or self.pair is None or not self.isVisibleTo(self.window()):
            return
        head, i, c = self.pair
        if head not in trace.heads or i >= trace.n_queries:
            return
        keys = min(trace.n_keys, MAX_KEYS)
        w = trace.stage("weights", head)[i, :keys]  # [keys]
        v = trace.stage("V", head)[:keys, c]  # [keys]
        worked = explain(trace, "head_outputs", head, i, c, keys).steps[0]  # the products
        self.canvas.names = ("w", "v", "w×v")
        self.canvas.set_numbers(w, v, [value for _label, value in worked.terms])
        self.component.setPrefix("key ")
        self.component.setRange(0, max(0, keys - 1))
        self._fill_boxes()
        more = f" (first {keys} of {trace.n_keys} keys)" if trace.n_keys > keys else ""
        self.title.setText(f"weights of “{trace.tokens[i]}” · column {c} of V, head {head}{more}")
        self.result.setText(
            f"sum = output[{c}] of “{trace.tokens[i]}”: {shown_number(worked.result)}"
        )
