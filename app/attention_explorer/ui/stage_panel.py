"""StagePanel: every stage of the selected head, in pipeline order, with the step between.

    X → P → X + P                             (P and X + P when positions are on)
    · W_Q → Q,  · W_K → K,  · W_V → V         (projection mode; typed in direct mode)
    QKᵀ → scores → × 1/√d_k → scaled → mask → masked
    softmax → weights → · V → head output
    concat → concat → · W_O → output          (when heads > 1 or W_O exists)

Each arrow caption names the operation that turns one view into the next, so a learner can
read the order at a glance. The inputs (X … V) form a group that folds away when the panel is
too short to show them together with the scores and the weights, so the heart of attention
stays in view; the toggle, the keyboard (Ctrl+] / Ctrl+[) and the walkthrough open it. The
panel only routes the LiveTrace's trace to its views.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.numbers import format_number
from attention_explorer.ui.heatmap_view import HeatmapView
from attention_explorer.ui.stage_keys import StageKeys

#: The rows of views, each stage in pipeline order.
PIPELINE_ROWS = (
    ("X", "positions", "X_pos"),
    ("Q", "K", "V"),
    ("scores", "scaled", "masked"),
    ("weights", "head_outputs"),
    ("concat", "output"),
)
#: The stages of the foldable inputs group (those of them the computation has).
INPUT_GROUP = ("X", "positions", "X_pos", "Q", "K", "V")
#: Stages shown only in projection mode (the input the projections read).
INPUT_STAGES = ("X", "positions", "X_pos")
#: Stages shown only when positional encoding is on.
POSITION_STAGES = ("positions", "X_pos")
#: Width one caption and its view need, in pixels; the panel fits 1 to 3 per row.
PAIR_WIDTH = 330
#: Width of the caption beside each view.
CAPTION_WIDTH = 60
#: Stages shown only with several heads or an output projection.
COMBINE_STAGES = ("concat", "output")

#: Cells a side shown around the cell the walkthrough points at when a view is shrunk.
CELL_SPAN = 10


def step_caption(stage: str, trace) -> str:
    """The operation that produces ``stage`` from the view before it, e.g. "× 1/√4"."""
    config = trace.config if trace is not None else None
    projected = config is None or config.mode == "projection"
    simple = {"X": "input", "positions": "position\nencoding", "X_pos": "X + P"}
    if stage in simple:
        return simple[stage]
    if stage in ("Q", "K", "V"):
        return f"X · W_{stage}" if projected else f"{stage}\n(typed)"
    if stage == "scores":
        return "Q·Kᵀ"
    if stage == "scaled":
        if config is None or config.scale == "sqrt_dk":
            text = f"× 1/√{config.head_dim}" if config else "× 1/√d_k"
        elif config.scale == "none":
            text = "× 1"
        else:
            text = f"× {format_number(trace.scale, 3)}"
        if config is not None and config.temperature != 1:
            text += f"\n÷ T={format_number(config.temperature, 3)}"
        return text
    if stage == "masked":
        return f"mask\n({config.mask})" if config else "mask"
    if stage == "weights":
        normalizer = config.normalizer if config else "softmax"
        return f"{normalizer}\nper {'cell' if normalizer == 'sigmoid' else 'row'}"
    if stage == "head_outputs":
        return "· V"
    if stage == "concat":
        return "concat\nheads"
    return "· W_O"


def hidden_stages(trace) -> tuple[str, ...]:
    """The stages a panel leaves out for ``trace``: the input row in direct mode, P and X + P
    with positions off, concat and output for one head without W_O, output without W_O."""
    hidden = []
    config = trace.config
    if config.mode != "projection":
        hidden += INPUT_STAGES
    elif getattr(config, "positional", "none") == "none":
        hidden += POSITION_STAGES
    if not (config.heads > 1 or trace.has("output")):
        hidden += COMBINE_STAGES
    elif not trace.has("output"):  # several heads, no W_O: their concatenation is the output
        hidden.append("output")
    return tuple(hidden)


def pack_rows(shown, need: dict[str, int], width: int) -> tuple[tuple[str, ...], ...]:
    """Lines of views in pipeline order: the input group's views flow together, then the
    views from the scores on; a new line when the next view's ``need`` (pixels) no longer
    fits ``width``; at most three views per line.

    Flowing (rather than one pipeline row per line) keeps the scores and the weights within
    two lines of a narrow panel: scores, scaled | masked, weights.
    """
    lines: list[tuple[str, ...]] = []
    order = [s for row in PIPELINE_ROWS for s in row]
    groups = ([s for s in order if s in INPUT_GROUP], [s for s in order if s not in INPUT_GROUP])
    for group in groups:
        line: list[str] = []
        used = 0
        for stage in (s for s in group if s in shown):
            if line and (used + need[stage] > width or len(line) == 3):
                lines.append(tuple(line))
                line, used = [], 0
            line.append(stage)
            used += need[stage]
        if line:
            lines.append(tuple(line))
    return tuple(lines)


class StagePanel(QWidget):
    """The live stage views of the selected head, read from ``live_trace``.

    Signals relay the views' context menus: ``export_requested(stage, head)``,
    ``copy_requested(stage, head)``.
    """

    export_requested = Signal(str, int)
    copy_requested = Signal(str, int)

    def __init__(self, session, live_trace, prefs, parent=None):
        super().__init__(parent)
        self.session, self.live, self.prefs = session, live_trace, prefs
        self._views: dict[str, HeatmapView] = {}
        self._captions: dict[str, QLabel] = {}
        self._hidden: frozenset[str] = frozenset()  # stages this computation does not have
        self._arrangement: tuple = ()  # (columns, lines of stage names) of the current layout
        self._inputs_choice: bool | None = None  # the learner's click on the toggle; None: auto
        self._inputs_forced = False  # the walkthrough or the keyboard points into the inputs
        self._build()
        self.keys = StageKeys(self)
        live_trace.updated.connect(self._on_trace_updated)
        session.events.selected_head.connect(self._on_selected_head_changed)
        if live_trace.trace is not None:
            self._on_trace_updated(live_trace.trace)

    def _build(self) -> None:
        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)
        ignored, preferred = QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred
        self.header.setSizePolicy(ignored, preferred)  # a long line must not widen the panel
        self.header.setToolTip("Hover a cell for its arithmetic, click to select")
        self.inputs_toggle = QToolButton()
        self.inputs_toggle.setObjectName("inputsToggle")
        self.inputs_toggle.setCheckable(True)
        self.inputs_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.inputs_toggle.setAutoRaise(True)
        self.inputs_toggle.clicked.connect(self._on_inputs_toggled)
        # No word wrap: a height-for-width child would make the scroll area use the views'
        # preferred height instead of the height it has.
        inner = QWidget()
        self._column = QVBoxLayout(inner)
        self._column.setContentsMargins(2, 2, 2, 2)
        self._column.setSpacing(4)
        top = QHBoxLayout()
        top.addWidget(self.inputs_toggle)
        top.addWidget(self.header, 1)
        self._column.addLayout(top)
        for stages in PIPELINE_ROWS:
            for stage in stages:
                caption = QLabel(f"{step_caption(stage, None)}\n→", inner)
                caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
                caption.setMinimumWidth(CAPTION_WIDTH - 4)
                bold = caption.font()
                bold.setBold(True)
                caption.setFont(bold)  # not a style sheet: that would freeze the theme's colours
                caption.setObjectName(f"caption_{stage}")
                view = HeatmapView(stage, self.session, self.prefs, inner)
                view.export_requested.connect(self.export_requested)
                view.copy_requested.connect(self.copy_requested)
                view.wanted_width_changed.connect(self._on_wanted_width_changed)
                self._captions[stage], self._views[stage] = caption, view
        scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self._scroll = scroll
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self._reflow()

    def _line_height(self) -> int:
        """The least height one line of views takes (a view's minimum, plus spacing)."""
        view = next(iter(self._views.values()))
        return view.minimumSizeHint().height() + self._column.spacing()

    def _inputs_fit(self, input_lines: int, rest) -> bool:
        """True when the input lines and every line up to the weights fit the panel's height."""
        to_weights = next((k + 1 for k, line in enumerate(rest) if "weights" in line), len(rest))
        top = self.inputs_toggle.sizeHint().height() + 2 * self._column.spacing() + 4
        return top + (input_lines + to_weights) * self._line_height() <= self.height()

    def _reflow(self) -> None:
        """Lay the (caption, view) pairs out in pipeline order, as many side by side as fit
        the width each view asks for; fold the inputs away when they would push the weights
        below the panel's bottom edge (unless the learner or the walkthrough opened them)."""
        width = self.width() - self._scroll.verticalScrollBar().sizeHint().width()
        computed = tuple(s for s in self._views if s not in self._hidden)
        need = {s: max(PAIR_WIDTH, self._views[s].wanted_width() + CAPTION_WIDTH) for s in computed}
        lines = pack_rows(computed, need, width)
        input_lines = tuple(line for line in lines if line[0] in INPUT_GROUP)
        rest = tuple(line for line in lines if line[0] not in INPUT_GROUP)
        if self._inputs_forced:
            is_open = True
        elif self._inputs_choice is not None:
            is_open = self._inputs_choice
        else:
            is_open = self._inputs_fit(len(input_lines), rest)
        self._update_toggle(tuple(s for s in computed if s in INPUT_GROUP), is_open)
        rows = (input_lines if is_open else ()) + rest
        shown = tuple(s for line in rows for s in line)
        widest = max(220, width - CAPTION_WIDTH - 8)  # never wider than the panel
        for stage in computed:
            view = self._views[stage]
            least = min(view.wanted_width(), widest)
            if view.minimumWidth() != least:
                view.setMinimumWidth(least)
        columns = max((len(r) for r in rows), default=1)
        if (columns, rows) == self._arrangement:
            return
        self._arrangement = (columns, rows)
        while self._column.count() > 1:  # keep the header line, drop the old rows
            old = self._column.takeAt(1).layout()
            while old is not None and old.count():
                old.takeAt(0)
        for stages in filter(None, rows):
            line = QHBoxLayout()
            line.setSpacing(2)
            for stage in stages:
                line.addWidget(self._captions[stage])
                line.addWidget(self._views[stage], 1)
            self._column.addLayout(line, 1)
        for stage in self._views:
            self._captions[stage].setVisible(stage in shown)
            self._views[stage].setVisible(stage in shown)

    def _update_toggle(self, inputs: tuple[str, ...], is_open: bool) -> None:
        names = {"positions": "P", "X_pos": "X + P"}
        listed = ", ".join(names.get(s, s) for s in inputs)
        self.inputs_toggle.setVisible(bool(inputs))
        self.inputs_toggle.setChecked(is_open)
        arrow = Qt.ArrowType.DownArrow if is_open else Qt.ArrowType.RightArrow
        self.inputs_toggle.setArrowType(arrow)
        self.inputs_toggle.setText(f"Inputs: {listed}" + ("" if is_open else " (folded)"))
        self.inputs_toggle.setToolTip(
            ("Fold" if is_open else "Show")
            + f" the input views ({listed}). They fold by themselves when the panel is too"
            " short to show them with the scores and the weights; Ctrl+[ and Ctrl+] step"
            " through every stage."
        )

    def _on_inputs_toggled(self, checked: bool) -> None:
        self._inputs_choice = bool(checked)
        self._inputs_forced = False
        self._reflow()
        self._scroll.verticalScrollBar().setValue(0)  # the toggle is at the top: stay there

    def _on_wanted_width_changed(self, *_args) -> None:
        self._reflow()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API name
        """Re-flow the views: three per row when there is room, fewer when narrow."""
        super().resizeEvent(event)
        self._reflow()

    # -- public API -------------------------------------------------------------------------
    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API name
        """Room for three heatmaps side by side: the panel is the window's main view."""
        return QSize(960, 760)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API name
        """At least one heatmap wide, so a splitter never crushes the views."""
        return QSize(420, 320)

    def view(self, stage: str) -> HeatmapView:
        """The view showing ``stage``."""
        return self._views[stage]

    def views(self) -> dict[str, HeatmapView]:
        """Every view, by stage name, in pipeline order."""
        return dict(self._views)

    def highlight_stage(self, stage: str | None) -> None:
        """Frame the view of ``stage`` (the walkthrough points at it) and scroll it into
        sight, opening the inputs group when ``stage`` is one of them; None clears the frame."""
        for name, view in self._views.items():
            view.set_highlighted(name == stage)
        self.bring_into_view(stage)

    def show_cell(self, stage: str | None, row: int, col: int) -> None:
        """Zoom the view of ``stage`` onto cell (``row``, ``col``) when the view shows the
        stage shrunk (a long sequence: one cell would be a fraction of a pixel), so the
        walkthrough's cell and its neighbours are seen exactly, with their numbers."""
        view = self._views.get(stage) if stage is not None else None
        frame = view.frame if view is not None else None
        if frame is None or (frame.block == (1, 1) and not frame.zoomed):
            return
        view.zoom.show_around(row, col, CELL_SPAN)

    def bring_into_view(self, stage: str | None) -> None:
        """Scroll the column so that the view of ``stage`` is on screen; an input stage opens
        the inputs group until a later call names a stage outside it."""
        forced = stage in INPUT_GROUP
        if forced != self._inputs_forced:
            self._inputs_forced = forced
            self._reflow()
        if stage in self._views and self._views[stage].isVisibleTo(self):
            self.layout().activate()
            self._scroll.widget().layout().activate()
            self._scroll.ensureWidgetVisible(self._views[stage], 0, 0)

    def inputs_open(self) -> bool:
        """True when the input views (X … V) are shown, False while they are folded away."""
        return self.inputs_toggle.isChecked()

    def visible_rect(self, stage: str):
        """The part of the view of ``stage`` inside the scroll area's viewport (viewport
        coordinates); empty when the view is hidden or scrolled out of sight."""
        from PySide6.QtCore import QPoint, QRect

        view, viewport = self._views[stage], self._scroll.viewport()
        if not view.isVisibleTo(self):
            return QRect()
        top_left = view.mapTo(viewport, QPoint(0, 0))
        return QRect(top_left, view.size()).intersected(viewport.rect())

    def scroll_area(self) -> QScrollArea:
        """The scroll area holding the column of views."""
        return self._scroll

    def combine_row_shown(self) -> bool:
        """True when the concat view (and the W_O output, when computed) is part of the panel."""
        return "concat" not in self._hidden

    def shown_stages(self) -> tuple[str, ...]:
        """Every stage this computation has, in pipeline order, the folded inputs included
        (their views stay up to date)."""
        return tuple(s for s in self._views if s not in self._hidden)

    def on_screen_stages(self) -> tuple[str, ...]:
        """The stages laid out now, in pipeline order: not the inputs while they are folded."""
        return tuple(s for line in self._arrangement[1] for s in line)

    def columns(self) -> int:
        """The most views side by side in a line now (1 to 3, from the panel's width)."""
        return self._arrangement[0]

    # -- updates ----------------------------------------------------------------------------
    def _on_trace_updated(self, trace) -> None:
        head = self.session.selected_head
        hidden = frozenset(hidden_stages(trace))
        self._hidden = hidden  # laid out by the one _reflow() below
        for stage, view in self._views.items():
            if stage in hidden:
                continue
            view.set_trace(trace, head)
            text = f"{step_caption(stage, trace)}\n→"
            if self._captions[stage].text() != text:
                self._captions[stage].setText(text)
        self._reflow()  # the views may ask for other widths now (their signals were blocked)
        self._update_header(trace, head)

    def _update_header(self, trace, head: int) -> None:
        heads = trace.config.heads
        text = f"<b>Head {head}</b> of {heads} · {trace.n_queries} queries × {trace.n_keys} keys"
        if self.header.text() != text:
            self.header.setText(text)

    def _on_selected_head_changed(self, *_args) -> None:
        trace = self.live.trace
        if trace is not None:
            self._on_trace_updated(trace)
