"""ExportDialog: save one stage of one head (or the all-heads grid) as a picture or numbers."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.core.stages import FOCUS_STAGE, title
from attention_explorer.exporting import ExportError, export_heads_grid, export_stage
from attention_explorer.exporting.stages import computed_stages, is_per_head
from attention_explorer.ui.export import export_dialog_parts as parts
from attention_explorer.ui.export.export_estimate import confirm_export, estimate_export
from attention_explorer.ui.export.picture_options import PictureOptions
from attention_explorer.ui.widgets.colormaps import colormap_name_for
from attention_explorer.writing.output_policy import OutputRefused, check_output

#: Formats offered, with what each is for.
FORMAT_CHOICES = (
    ("png", "PNG picture"),
    ("svg", "SVG vector picture"),
    ("pdf", "PDF page"),
    ("csv", "CSV numbers (token names as headers)"),
    ("npy", "NumPy array (.npy)"),
)
#: The pseudo-head that stands for "every head in one grid picture".
GRID = -1


class ExportDialog(QDialog):
    """Choose stage, head, format, size and file; export through attention_explorer.exporting.

    Errors (a missing folder, a full disk, a size out of range) are shown in the dialog, which
    stays open; nothing is left half-written because the export module writes atomically.
    """

    def __init__(
        self,
        window: QWidget,
        trace,
        prefs,
        settings: QSettings,
        stage: str,
        head: int,
        name: str = "",
    ):
        super().__init__(window)
        self.setWindowTitle("Export a stage")
        self.trace, self.prefs, self.settings, self.name = trace, prefs, settings, name
        self.written: Path | None = None
        self.stage_box = QComboBox()
        for name in computed_stages(trace):
            self.stage_box.addItem(title(name, trace.config.normalizer), name)
        index = self.stage_box.findData(stage)
        if index < 0:
            index = max(self.stage_box.findData(FOCUS_STAGE), 0)
        self.stage_box.setCurrentIndex(index)
        self.head_box = QComboBox()
        for k in trace.heads:
            self.head_box.addItem(f"Head {k}", k)
        if len(trace.heads) > 1:
            self.head_box.addItem("All heads in one grid", GRID)
        self.head_box.setCurrentIndex(max(self.head_box.findData(head), 0))
        self.format_box = QComboBox()
        for fmt, text in FORMAT_CHOICES:
            self.format_box.addItem(text, fmt)
        remembered = self.format_box.findData(settings.value("export/format", "png"))
        self.format_box.setCurrentIndex(max(remembered, 0))
        self.options = PictureOptions(settings, prefs.show_values)
        self.path_edit = QLineEdit()
        path_row = parts.browse_row(self.path_edit, self._browse)
        self.message = parts.message_line()
        buttons = parts.save_buttons(self, self.export)
        form = QFormLayout()
        form.addRow("Stage:", self.stage_box)
        form.addRow("Head:", self.head_box)
        form.addRow("Format:", self.format_box)
        form.addRow("File:", path_row)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.options)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        for box in (self.stage_box, self.head_box, self.format_box):
            box.currentIndexChanged.connect(self._suggest_path)
        self._suggest_path()
        self.resize(520, self.sizeHint().height())

    # -- choices -----------------------------------------------------------------------------
    def stage(self) -> str:
        """The chosen stage name."""
        return self.stage_box.currentData()

    def head(self) -> int:
        """The chosen head, or ``GRID`` for the all-heads grid."""
        return self.head_box.currentData()

    def fmt(self) -> str:
        """The chosen format (png, svg, pdf, csv, npy)."""
        return self.format_box.currentData()

    def _suggest_path(self, *_args) -> None:
        stage, head, fmt = self.stage(), self.head(), self.fmt()
        per_head = is_per_head(stage)
        grid_ok = per_head and fmt in ("png", "svg", "pdf")
        self.head_box.setEnabled(per_head)
        if head == GRID and not grid_ok:
            self.head_box.setCurrentIndex(0)
            return  # the index change calls back here
        self.options.setEnabled(fmt in ("png", "svg", "pdf"))
        if not per_head:
            stem = stage
        elif head == GRID:
            stem = f"{stage}_grid"
        else:
            stem = f"{stage}_head{head}"
        current = Path(self.path_edit.text()) if self.path_edit.text() else None
        folder = current.parent if current else parts.last_folder(self.settings)
        self.path_edit.setText(str(folder / f"{stem}.{fmt}"))
        self.message.clear()

    def _browse(self) -> None:
        chosen, _ = QFileDialog.getSaveFileName(
            self, "Export to", self.path_edit.text(), f"{self.fmt().upper()} (*.{self.fmt()})"
        )
        if chosen:
            self.path_edit.setText(chosen)

    # -- export ------------------------------------------------------------------------------
    def export(self) -> bool:
        """Write the file; on success remember the choices and close, else show why."""
        text = self.path_edit.text().strip()
        if not text:
            self.message.setText("Choose a file to export to.")
            return False
        path = Path(text).expanduser()
        if path.suffix.lower() != f".{self.fmt()}":
            path = path.with_name(path.name + f".{self.fmt()}")
        try:
            check_output(path)  # the output policy, before the picture is drawn
        except OutputRefused as exc:
            self.message.setText(f"Not exported: {exc}")
            return False
        options = dict(
            cmap=colormap_name_for(self.stage(), self.prefs),
            show_values=self.options.show_values(),
            size=self.options.picture_size(),
            dpi=self.options.dpi(),
            name=self.name or None,
            decimals=self.options.decimals(),
            scale=self.prefs.weights_scale,  # the weights' colour scale; other stages ignore it
        )
        look = {k: v for k, v in options.items() if k not in ("size", "dpi")}
        probe_head = self.trace.heads[0] if self.head() == GRID else self.head()
        probe_head = probe_head if is_per_head(self.stage()) else None
        with parts.wait_cursor():
            cost = estimate_export(
                self.trace,
                self.stage(),
                probe_head,
                self.fmt(),
                options["size"],
                options["dpi"],
                look,
            )
        width, height = options["size"]
        if not confirm_export(self, cost, f"a {width}×{height} picture"):
            self.message.setText("Not exported: choose a smaller size, or Save again.")
            return False
        try:
            with parts.wait_cursor():
                if self.head() == GRID:
                    self.written = export_heads_grid(self.trace, path, self.stage(), **options)
                else:
                    head = self.head()
                    self.written = export_stage(self.trace, self.stage(), head, path, **options)
        except ExportError as exc:
            self.message.setText(f"Not exported: {exc}")
            return False
        self.settings.setValue(parts.LAST_FOLDER_KEY, str(path.parent))
        self.settings.setValue("export/format", self.fmt())
        self.options.remember()
        self.accept()
        return True
