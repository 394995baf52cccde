"""MainWindow: tokens and matrices on the left, live stage views on the right, docks around."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMessageBox, QScrollArea, QWidget

from attention_explorer.engine import AttentionInputError
from attention_explorer.session import (
    History,
    Session,
    SessionFileError,
    resize,
    starter_session,
)
from attention_explorer.ui.editing.controls_panel import ControlsPanel
from attention_explorer.ui.editing.matrix_panel import MatrixPanel
from attention_explorer.ui.editing.token_strip import TokenStrip
from attention_explorer.ui.generate.generate_window import GenerateLauncher
from attention_explorer.ui.heatmap.cell_arithmetic import CellArithmetic
from attention_explorer.ui.model.compare_view import CompareView
from attention_explorer.ui.model.model_install import (
    SweepLauncher,
    install_model_features,
    menu_named,
)
from attention_explorer.ui.model.model_knockouts import Knockouts
from attention_explorer.ui.model.model_live import ModelLive
from attention_explorer.ui.model.model_output import OutputPanel
from attention_explorer.ui.model.model_panel import ModelPanel
from attention_explorer.ui.pipeline.dot_product_view import DotProductView
from attention_explorer.ui.pipeline.heads_grid import HeadsGrid
from attention_explorer.ui.pipeline.stage_panel import StagePanel
from attention_explorer.ui.state.live_trace import LiveTrace
from attention_explorer.ui.state.panel_context import PanelContext
from attention_explorer.ui.state.preferences import ViewPreferences
from attention_explorer.ui.walkthrough.experiment_banner import ExperimentBanner
from attention_explorer.ui.walkthrough.presenter import Presenter
from attention_explorer.ui.walkthrough.walkthrough_panel import WalkthroughPanel
from attention_explorer.ui.walkthrough.walkthrough_sum_view import WeightedSumView
from attention_explorer.ui.walkthrough.walkthrough_wiring import connect_walkthrough
from attention_explorer.ui.widgets import dialogs
from attention_explorer.ui.window.export_actions import ExportActions
from attention_explorer.ui.window.main_menus import Menus, build_menus
from attention_explorer.ui.window.session_file import DocumentController
from attention_explorer.ui.window.status_line import StatusLine
from attention_explorer.ui.window.theme import apply_theme
from attention_explorer.ui.window.window_layout import central_area, default_layout, fit_docks

if TYPE_CHECKING:  # built on demand, imported then
    from PySide6.QtWidgets import QSplitter

    from attention_explorer.ui.pipeline.summary_view import SummaryView
    from attention_explorer.ui.window.sources_page import SourcesPage


class MainWindow(ExportActions, QMainWindow):
    """The explorer window for one session.

    ``settings`` defaults to the user's QSettings; tests pass a throwaway one. Every part
    the window has is declared below and set in ``__init__``: the rooms' installers (menus,
    model mode, the walkthrough's wiring) return what they build and the window keeps it.
    """

    # The document and what is shared by the panels.
    settings: QSettings
    session: Session
    history: History
    prefs: ViewPreferences
    context: PanelContext
    live: LiveTrace
    document: DocumentController
    # The central area and the docks.
    status: StatusLine
    banner: ExperimentBanner
    tokens: TokenStrip
    matrices: MatrixPanel
    stages: StagePanel
    splitter: QSplitter  # the editor | the stage views
    heads_grid: HeadsGrid
    walkthrough: WalkthroughPanel
    controls: ControlsPanel
    arithmetic: CellArithmetic
    model_panel: ModelPanel
    controls_dock: QDockWidget
    walk_dock: QDockWidget
    heads_dock: QDockWidget
    arithmetic_dock: QDockWidget
    model_dock: QDockWidget
    # The menus and what the rooms' installers return.
    menus: Menus
    presenter: Presenter
    dot_product: DotProductView
    sum_view: WeightedSumView
    compare: CompareView
    compare_dock: QDockWidget
    compare_action: QAction
    model_output: OutputPanel
    output_dock: QDockWidget
    model_live: ModelLive
    knockouts: Knockouts
    sweep: SweepLauncher
    generate: GenerateLauncher  # Model > Generate… (Ctrl+Shift+G)
    # Built the first time they are asked for.
    summary_view: SummaryView | None
    sources_page: SourcesPage | None

    def __init__(self, session: Session | None = None, settings: QSettings | None = None):
        super().__init__()
        self.settings = settings or QSettings()
        self.session = session or Session.from_data(starter_session())
        self.history = History(self.session)
        self.prefs = ViewPreferences.load(self.settings)
        self.context = PanelContext(self.session, self.history, self.prefs)
        self.live = LiveTrace(self.session, self)
        self.document = DocumentController(self.session, self.history, self.settings, self)
        self.setObjectName("mainWindow")
        self.summary_view: SummaryView | None = None  # View > Long-context summary, on demand
        self.sources_page: SourcesPage | None = None  # Help > Sources, on demand
        self._build_widgets()
        self._install_parts()
        self._connect()
        apply_theme(self.prefs.theme)
        default_layout(self)
        self.restoreGeometry(self.settings.value("window/geometry", b""))
        self.restoreState(self.settings.value("window/state", b""))
        self.setWindowTitle(self.document.title())
        self.live.recompute_now()

    # -- layout ------------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        s, h, live, prefs = self.session, self.history, self.live, self.prefs
        self.status = StatusLine(self.statusBar(), s, live)
        live.updated.connect(self.status.begin_paint)
        self.banner = ExperimentBanner(s, live)
        self.tokens = TokenStrip(s, h)
        self.matrices = MatrixPanel(self.context)
        self.stages = StagePanel(s, live, prefs)
        self.heads_grid = HeadsGrid(s, live, prefs)
        self.walkthrough = WalkthroughPanel(s, live)
        self.controls = ControlsPanel(s, h)
        self.arithmetic = CellArithmetic(s, live)
        self.model_panel = ModelPanel(self.context)
        live.updated.connect(self.status.end_paint)
        self.splitter = central_area(self, self.banner, self.tokens, self.matrices, self.stages)

        scroll = QScrollArea()
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        scroll.setMinimumWidth(280)
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        self.controls_dock = self.add_dock("Controls", scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.walk_dock = self.add_dock("Walkthrough", self.walkthrough, bottom)
        self.heads_dock = self.add_dock("All heads", self.heads_grid, bottom)
        self.arithmetic_dock = self.add_dock("Cell arithmetic", self.arithmetic, bottom)
        self.model_dock = self.add_dock(
            "Model", self.model_panel, Qt.DockWidgetArea.RightDockWidgetArea
        )
        self.model_dock.hide()  # shown by File > Open Model… or View > Model
        # The controls take the left edge from top to bottom: the bottom docks sit beside them,
        # so neither the controls nor the stage column lose height to the other.
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.splitDockWidget(self.walk_dock, self.heads_dock, Qt.Orientation.Horizontal)
        self.tabifyDockWidget(self.walk_dock, self.arithmetic_dock)
        self.walk_dock.raise_()

    def _install_parts(self) -> None:
        """The menus, the walkthrough's side views and model mode's parts, each built by its
        own room and kept here."""
        self.menus = build_menus(self)
        self.presenter = self.menus.teaching.presenter
        model = install_model_features(self)
        self.compare, self.compare_dock = model.compare.view, model.compare.dock
        self.compare_action = model.compare.action
        self.model_output, self.output_dock = model.output, model.output_dock
        self.model_live, self.knockouts = model.live, model.knockouts
        self.sweep = SweepLauncher(self)
        self.generate = GenerateLauncher(self, menu_named(self, "&Model"))

    def fit_docks(self, width: int, height: int) -> None:
        """Share ``width`` x ``height`` out: narrow controls, short bottom docks (the All heads
        thumbnails need little room), the rest to the editor and, most, to the stage views."""
        fit_docks(self, width, height)

    def add_dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        """A dock titled ``title`` around ``widget`` in ``area`` (its object name, which the
        saved layout goes by, comes from the title)."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{title.replace(' ', '_').lower()}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _connect(self) -> None:
        self.document.title_changed.connect(self.setWindowTitle)
        self.document.error.connect(self.show_error)
        self.document.replaced.connect(self.walkthrough.new_document)
        self.document.replaced.connect(self.stages.new_session)  # laid out afresh, same name or not
        self.controls.message.connect(self.status.show_input_error)
        self.matrices.input_error.connect(self.status.show_input_error)
        self.banner.try_requested.connect(self.apply_experiment)
        self.walkthrough.step_changed.connect(self._on_walk_step)
        side = connect_walkthrough(self)  # follow a chosen token, reveal each step's operands
        self.dot_product, self.sum_view = side.dot_product, side.weighted_sum
        self.stages.view("masked").cell_clicked.connect(self.toggle_mask_cell)
        for name in ("Q", "K", "V"):  # a double-click asks to type into that matrix
            self.stages.view(name).edit_requested.connect(
                lambda *_cell, name=name: self.edit_typed_matrix(name)
            )
        self.stages.export_requested.connect(self.export_view)
        self.stages.copy_requested.connect(self.copy_view)
        self.prefs.events.all.connect(lambda *_: self.prefs.save(self.settings))
        self.prefs.events.theme.connect(apply_theme)
        self.model_panel.open_requested.connect(self.open_model_layer)
        self.model_panel.status.connect(self.status.show)
        self.document.replaced.connect(self.model_panel.document_replaced)

    # -- actions -----------------------------------------------------------------------------
    def show_error(self, text: str) -> None:
        """Show a problem in the status bar and a dialog; nothing in the session changes."""
        self.status.show(text, 15000)
        dialogs.warning(self, "Attention Explorer", text)

    def open_example(self, key: str) -> bool:
        """Load a worked example as a new, unsaved document."""
        from attention_explorer.session.examples import example_or_starter as example

        if not self.document.maybe_save():
            return False
        try:
            data = example(key)
        except (KeyError, SessionFileError) as exc:
            reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            self.show_error(f"Could not open the example {key}: {reason}")
            return False
        self.document.replace(data)
        return True

    def apply_experiment(self, changes: dict) -> None:
        """Apply an example's "try" config changes as one undo step, or explain the refusal."""
        try:
            config = self.session.config.with_changes(**changes)
            config.validate(len(self.session.tokens), len(self.session.key_tokens))
        except (AttentionInputError, TypeError) as exc:
            self.status.show(f"The engine refuses this change — {exc}", 20000)
            self.banner.show_refusal(str(exc))
            return
        # Trying an example's experiment is exploring, not editing: it never asks to be saved.
        with self.history.transaction("Try experiment", explore=True):
            self.session.config = config

    def show_cell_arithmetic(self) -> None:
        """Bring the arithmetic of the selected cell to the front (View > Cell arithmetic)."""
        self.arithmetic_dock.show()
        self.arithmetic_dock.raise_()
        self.arithmetic.text.setFocus()

    def show_summary(self) -> SummaryView:
        """View > Long-context summary: entropy, top keys, distance and sinks of the head."""
        from attention_explorer.ui.pipeline.summary_view import SummaryView, show_summary

        if self.summary_view is None:
            self.summary_view = SummaryView(self.session, self.live, self)
        return show_summary(self.summary_view)

    def show_sources(self) -> SourcesPage:
        """Help > Sources: the tutorials and sections the examples come from."""
        from attention_explorer.ui.window.sources_page import show_sources

        self.sources_page = show_sources(self)
        return self.sources_page

    def offer_direct_mode(self, array: str) -> bool:
        """The learner typed into ``array`` (Q, K or V) in projection mode: offer to switch the
        session to direct mode, where Q, K and V are typed, keeping every current number.

        Yes switches as one undo step (the projections become the typed Q, K, V, so every
        stage keeps its value). Returns True when the session is now in direct mode.
        """
        if self.session.config.mode == "direct":
            return True
        answer = dialogs.question(
            self,
            "Type Q, K and V directly?",
            f"In projection mode {array} is computed as X W_{array}, so it cannot be typed "
            "into. Switch to direct mode? Q, K and V keep their current numbers, and "
            "Undo switches back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        new = resize.set_mode(self.session.data(), "direct")
        with self.history.transaction("Switch to typing Q, K, V"):
            self.session.update(config=new.config, inputs=new.inputs)
        self.status.show("Direct mode: Q, K and V are now typed; every number was kept")
        return True

    def open_model(self) -> bool:
        """File > Open Model…: show the Model panel and load the model it names (the open
        model session's), asking for a folder only when none is named."""
        self.model_dock.show()
        self.model_dock.raise_()
        return self.model_panel.open_or_choose()

    def open_model_layer(self, data, head: int) -> bool:
        """Open a model layer the Model panel built as the document, with ``head`` selected."""
        if not self.document.maybe_save():
            return False
        self.document.replace(data)
        self.model_panel.opened(data, head)
        return True

    def edit_typed_matrix(self, name: str) -> bool:
        """Bring Q, K or V into the editor, offering direct mode first in projection mode."""
        if not self.offer_direct_mode(name):
            return False
        return self.matrices.show_array(name)

    def toggle_mask_cell(self, row: int, col: int) -> bool:
        """Under a custom mask, let query ``row`` see key ``col`` or hide it (one undo step).

        A click on the masked-scores view calls this; under the other mask kinds the click
        only selects the cell. Returns True when the mask changed.
        """
        data = self.session.data()
        keys = data.key_tokens
        if data.config.mask != "custom" or not (
            0 <= row < len(data.tokens) and 0 <= col < len(keys)
        ):
            return False
        new = resize.toggle_mask_cell(data, row, col)
        with self.history.transaction(f"Toggle mask cell ({row}, {col})"):
            self.session.config = new.config
        verb = "may now look at" if new.config.custom_mask[row][col] else "no longer sees"
        self.status.show(f"Query “{data.tokens[row]}” {verb} key “{keys[col]}”")
        return True

    def _on_walk_step(self, step) -> None:
        """Frame the step's stage view (zoomed onto the step's cell when the stage is shown
        shrunk) and bring the editor of its numbers to the front."""
        self.stages.highlight_stage(step.stage if step is not None else None)
        if step is not None and step.stage is not None and step.cells:
            self.stages.show_cell(step.stage, *step.cells[0])
        if step is not None and step.editor:
            self.matrices.show_array(step.editor)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API name
        """Ask about unsaved changes, then remember the layout."""
        if not self.document.maybe_save():
            event.ignore()
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.prefs.save(self.settings)
        self.live.shutdown()
        event.accept()
