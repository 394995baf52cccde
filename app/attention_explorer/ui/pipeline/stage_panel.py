"""StagePanel: every stage of the selected head, in pipeline order, with the step between
(an arrow caption such as "× 1/√4" names the operation that makes each view).

Which views, their order, groups and arrow captions come from the stage catalogue. The inputs
(X … V) fold away when the panel is too short to show them with the scores and the weights;
the toggle, Ctrl+] / Ctrl+[ and the walkthrough open them. The layout is decided per panel
size and kept while the learner edits; the panel only routes the LiveTrace's trace to views.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.core import stage_rules
from attention_explorer.core.stages import FOCUS_STAGE, panel_stages, stage as catalogue_stage
from attention_explorer.ui.heatmap.heatmap_view import HeatmapView
from attention_explorer.ui.heatmap.title_cover import CutTitleCover
from attention_explorer.ui.pipeline.stage_keys import StageKeys
from attention_explorer.ui.pipeline.stage_rows import (
    gathered_rows,
    input_group,
    lines_spanned,
    pack_rows,
    show_all_button,
    toggle_texts,
)

#: Width one caption and its view need, in pixels; the panel fits 1 to 3 per row.
PAIR_WIDTH = 330
#: Width of the caption beside each view.
CAPTION_WIDTH = 60
#: Cells a side shown around the cell the walkthrough points at when a view is shrunk.
CELL_SPAN = 10


def step_caption(stage: str, trace) -> str:
    """The operation that produces ``stage`` from the view before it, e.g. "× 1/√4" (the
    catalogue's caption, filled in for ``trace``'s config; None: the plain caption)."""
    return stage_rules.caption(stage, trace)


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
        self._captionless = False  # the lines are a walkthrough step's views, alone
        self._inputs_choice: bool | None = None  # the learner's click on the toggle; None: auto
        self._inputs_forced = False  # the walkthrough or the keyboard points into the inputs
        self._latch = None  # (panel size, widths the views were laid out for, auto-open)
        self._awaiting = False  # another session: latch nothing until its trace arrives
        self._zoomed: set[str] = set()  # views whose width request followed a zoom
        self._gathered: tuple[str, ...] = ()  # a walkthrough step's views, alone; (): all
        self._build()
        self.keys = StageKeys(self)
        live_trace.updated.connect(self._on_trace_updated)
        session.events.selected_head.connect(self._on_selected_head_changed)
        session.events.name.connect(self.new_session)
        prefs.events.show_values.connect(self.relayout)  # numbers on or off need other widths
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
        self.show_all_button = show_all_button(lambda: self.gather(()))
        top = QHBoxLayout()
        top.addWidget(self.inputs_toggle)
        top.addWidget(self.show_all_button)
        top.addWidget(self.header, 1)
        self._column.addLayout(top)
        for name in panel_stages():
            caption = QLabel(f"{step_caption(name, None)}\n→", inner)
            caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
            caption.setMinimumWidth(CAPTION_WIDTH - 4)
            bold = caption.font()
            bold.setBold(True)
            caption.setFont(bold)  # not a style sheet: that would freeze the theme's colours
            caption.setObjectName(f"caption_{name}")
            view = HeatmapView(name, self.session, self.prefs, inner)
            view.export_requested.connect(self.export_requested)
            view.copy_requested.connect(self.copy_requested)
            view.wanted_width_changed.connect(partial(self._on_wanted_width_changed, name))
            self._captions[name], self._views[name] = caption, view
        self._scroll = scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)  # a title is seen whole or not at all:
        self.title_cover = CutTitleCover(scroll, [v.title_bar for v in self._views.values()])
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self._reflow()

    def _line_height(self) -> int:
        """The least height one line of views takes (a view's minimum, plus spacing)."""
        view = next(iter(self._views.values()))
        return view.minimumSizeHint().height() + self._column.spacing()

    def _inputs_fit(self, input_lines: int, rest) -> bool:
        """True when the input lines and the lines up to the weights fit the panel's height."""
        to_focus = next((k + 1 for k, line in enumerate(rest) if FOCUS_STAGE in line), len(rest))
        top = self.inputs_toggle.sizeHint().height() + 2 * self._column.spacing() + 4
        return top + (input_lines + to_focus) * self._line_height() <= self.height()

    def relayout(self, *_args) -> None:
        """Decide the layout afresh from the views' wanted widths (e.g. numbers on or off)."""
        self._latch = None
        self._reflow()

    def _line_width(self) -> int:
        """The width a line of views is packed into: the panel's, less its scroll bar."""
        return self.width() - self._scroll.verticalScrollBar().sizeHint().width()

    def new_session(self, *_args) -> None:
        """Another session: laid out afresh once its trace arrives (until then: the old one)."""
        self._latch, self._awaiting = None, True

    def _needs(self, computed, width: int) -> dict[str, int]:
        """The width each view is laid out for, latched when the panel's size changes (or on
        :meth:`relayout`) and kept through edits, so an edit never moves views between lines."""
        size = (width, self.height())
        if self._latch is None or self._latch[0] != size:
            self._latch = (size, {}, None)  # (size, needs, inputs open by themselves)
        needs = self._latch[1]
        for name in computed:  # a request counts once the view has drawn (reading .frame
            view = self._views[name]  # draws it), placed in the panel, shown or not yet
            drawn = not self._awaiting and view.frame is not None
            if name not in needs and drawn and not view.isHidden():
                needs[name] = max(PAIR_WIDTH, view.wanted_width() + CAPTION_WIDTH)
        views = self._views
        asked = {s: max(PAIR_WIDTH, views[s].wanted_width() + CAPTION_WIDTH) for s in computed}
        return {s: needs.get(s, asked[s]) for s in computed}

    def _inputs_shown(self, input_lines: int, rest) -> bool:
        """Open or folded: the walkthrough's or the learner's choice, else what fits (decided
        with the layout, not again on every edit)."""
        if self._inputs_forced or any(s in input_group() for s in self._gathered):
            return True
        if self._inputs_choice is not None:
            return self._inputs_choice
        size, needs, auto = self._latch
        if auto is None:
            auto = self._inputs_fit(input_lines, rest)
            self._latch = (size, needs, auto)
        return auto

    def _reflow(self) -> None:
        """Lay the (caption, view) pairs out in pipeline order, as many side by side as fit
        the width each view asked for when the layout was decided; fold the inputs away when
        they would push the weights below the panel's bottom edge (unless the learner or the
        walkthrough opened them)."""
        width = self._line_width()
        computed = tuple(s for s in self._views if s not in self._hidden)
        need = self._needs(computed, width)
        folding = input_group()
        gathered = tuple(s for s in self._gathered if s in computed)
        if gathered:  # a walkthrough step's views alone, side by side where they fit
            rows, is_open = gathered_rows(gathered, width), any(s in folding for s in gathered)
        else:
            lines = pack_rows(computed, need, width)
            input_lines = tuple(line for line in lines if line[0] in folding)
            rest = tuple(line for line in lines if line[0] not in folding)
            is_open = self._inputs_shown(len(input_lines), rest)
            rows = (input_lines if is_open else ()) + rest
        self._update_toggle(tuple(s for s in computed if s in folding), is_open)
        widest = max(220, width - CAPTION_WIDTH - 8)  # never wider than the panel
        for name in computed:
            # 2 px less: spacing and margins add 2 px a line to the needs pack_rows sums up
            least = min(need[name] - CAPTION_WIDTH - 2, widest)
            line = next((r for r in rows if name in r), ()) if gathered else ()
            least = max(220, min(least, width // len(line) - 10)) if line else least
            if self._views[name].minimumWidth() != least:
                self._views[name].setMinimumWidth(least)
        columns = max((len(r) for r in rows), default=1)
        if (columns, rows, bool(gathered)) != (*self._arrangement, self._captionless):
            self._arrangement, self._captionless = (columns, rows), bool(gathered)
            self._place(rows)

    def _place(self, rows) -> None:
        """Put the views of ``rows`` into the column, one layout line each; hide the rest."""
        while self._column.count() > 1:  # keep the header line, drop the old rows
            old = self._column.takeAt(1).layout()
            while old is not None and old.count():
                old.takeAt(0)
        for stages in filter(None, rows):
            line = QHBoxLayout()
            line.setSpacing(2)
            for name in stages:
                line.addWidget(self._captions[name])
                line.addWidget(self._views[name], 1)
            self._column.addLayout(line, 1)
        shown = {s for line in rows for s in line}
        for name in self._views:  # a step's views alone: the pipeline's captions do not apply
            self._captions[name].setVisible(name in shown and not self._captionless)
            self._views[name].setVisible(name in shown)

    def _update_toggle(self, inputs: tuple[str, ...], is_open: bool) -> None:
        self.inputs_toggle.setVisible(bool(inputs))
        self.inputs_toggle.setChecked(is_open)
        arrow = Qt.ArrowType.DownArrow if is_open else Qt.ArrowType.RightArrow
        self.inputs_toggle.setArrowType(arrow)
        text, tip = toggle_texts(tuple(catalogue_stage(s).short_name for s in inputs), is_open)
        self.inputs_toggle.setText(text)
        self.inputs_toggle.setToolTip(tip)

    def _on_inputs_toggled(self, checked: bool) -> None:
        self._inputs_choice = bool(checked)
        self._inputs_forced = False
        self._gathered = ()
        self.relayout()
        self._scroll.verticalScrollBar().setValue(0)  # the toggle is at the top: stay there

    def _on_wanted_width_changed(self, name: str, *_args) -> None:
        """A view asks for another width. A zoom (in or back out) is the learner's own change
        to that view: it gets the room it asks for; an edit's request waits for a new size."""
        frame = self._views[name].frame
        zoomed = frame is not None and frame.zoomed
        if self._latch is not None and (zoomed or name in self._zoomed):
            self._latch[1].pop(name, None)
        self._zoomed.discard(name)
        if zoomed:
            self._zoomed.add(name)
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
        forced = stage in input_group()
        if forced != self._inputs_forced:
            self._inputs_forced = forced
            self._reflow()
        if stage in self._views and self._views[stage].isVisibleTo(self):
            self.layout().activate()
            self._scroll.widget().layout().activate()
            self._scroll.ensureWidgetVisible(self._views[stage], 0, 0)

    def gather(self, stages) -> None:
        """Lay out only the views of ``stages`` (a walkthrough step's operands that cannot all
        be on screen in the full layout), the inputs group open when one of them is an input;
        () shows every view again. The learner can go back with "Show every view"."""
        stages = tuple(stages)
        if stages != self._gathered:
            self._gathered = stages
            self.show_all_button.setVisible(bool(stages))
            self._reflow()

    def gathered(self) -> tuple[str, ...]:
        """The stages laid out alone for a walkthrough step; () while every view is."""
        return self._gathered

    def lines_needed(self, stages) -> tuple[int, int]:
        """(lines, pixels): how many lines of the full layout, inputs open, hold ``stages``
        from the first to the last, and the least height those lines take."""
        width = self._line_width()
        computed = self.shown_stages()
        lines = pack_rows(computed, self._needs(computed, width), width)
        first, count = lines_spanned(lines, stages)
        spacing = self._column.spacing()
        tallest = [max(self._views[s].minimumSizeHint().height() for s in line) for line in lines]
        return count, sum(tallest[first : first + count]) + count * spacing

    def inputs_open(self) -> bool:
        """True when the input views (X … V) are shown, False while they are folded away."""
        return self.inputs_toggle.isChecked()

    def visible_rect(self, stage: str):
        """The part of the view of ``stage`` inside the scroll area's viewport (viewport
        coordinates); empty when the view is hidden or scrolled out of sight."""
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
        combine = panel_stages("combine")
        return bool(combine) and combine[0] not in self._hidden

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
        self._awaiting = False
        head = self.session.selected_head
        hidden = frozenset(stage_rules.hidden_stages(trace))  # each stage's `when` rule
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
