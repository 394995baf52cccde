"""ExportAllDialog: every stage and head of the current session into one folder."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.core.stages import FOCUS_STAGE
from attention_explorer.engine import AttentionInputError
from attention_explorer.exporting import ExportError, export_all, plan_exports
from attention_explorer.exporting.stages import computed_stages, is_per_head
from attention_explorer.ui.export import export_dialog_parts as parts
from attention_explorer.ui.export.export_estimate import confirm_export, estimate_export
from attention_explorer.ui.export.picture_options import PictureOptions

#: Formats offered, with a short label each.
ALL_FORMATS = (
    ("png", "PNG"),
    ("svg", "SVG"),
    ("pdf", "PDF"),
    ("csv", "CSV"),
    ("npy", "NPY"),
    ("npz", "NPZ (whole trace)"),
)


class ExportAllDialog(QDialog):
    """Pick formats and a folder; files are named ``weights_head0.png``, ``concat.csv``, ...

    ``trace_source()`` is called on Export and must return a trace holding every head (the
    window's live trace may hold only the selected head for very large sizes).
    """

    def __init__(self, window: QWidget, trace_source, prefs, settings: QSettings, name: str = ""):
        super().__init__(window)
        self.setWindowTitle("Export every stage and head")
        self.trace_source = trace_source
        self.prefs = prefs
        self.settings = settings
        self.name = name
        self.written: list[Path] = []
        remembered = str(settings.value("export/all_formats", "png,csv")).split(",")
        self.format_boxes: dict[str, QCheckBox] = {}
        format_row = QHBoxLayout()
        for fmt, label in ALL_FORMATS:
            box = QCheckBox(label)
            box.setChecked(fmt in remembered)
            box.toggled.connect(self._update_summary)
            self.format_boxes[fmt] = box
            format_row.addWidget(box)
        format_row.addStretch(1)
        self.folder_edit = QLineEdit(str(parts.last_folder(settings)))
        folder_row = parts.browse_row(self.folder_edit, self._browse)
        self.options = PictureOptions(settings, prefs.show_values)
        self.summary = QLabel()
        self.message = parts.message_line()
        buttons = parts.save_buttons(self, self.export, "Export")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Formats:"))
        layout.addLayout(format_row)
        layout.addWidget(QLabel("Folder:"))
        layout.addLayout(folder_row)
        layout.addWidget(self.options)
        layout.addWidget(self.summary)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self._update_summary()
        self.resize(560, self.sizeHint().height())

    def formats(self) -> list[str]:
        """The ticked formats."""
        return [fmt for fmt, box in self.format_boxes.items() if box.isChecked()]

    def _update_summary(self, *_args) -> None:
        self.options.setEnabled(any(f in self.formats() for f in ("png", "svg", "pdf")))
        self.summary.setText(
            "Files are named by stage and head: weights_head0.png, weights_grid.png, concat.csv."
        )

    def _browse(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Export into", self.folder_edit.text())
        if chosen:
            self.folder_edit.setText(chosen)

    def export(self) -> bool:
        """Write every file; on success remember the choices and close, else say why."""
        if not self.formats():
            self.message.setText("Tick at least one format.")
            return False
        folder = Path(self.folder_edit.text().strip() or ".").expanduser()
        try:
            with parts.wait_cursor():
                trace = self.trace_source()
            if not self._confirm_size(trace):
                self.message.setText("Nothing exported: choose a smaller size, or Export again.")
                return False
            with parts.wait_cursor():
                self.written = self._write(folder, trace)
        except (ExportError, AttentionInputError) as exc:
            self.message.setText(f"Nothing exported: {exc}")
            return False
        self.settings.setValue(parts.LAST_FOLDER_KEY, str(folder))
        self.settings.setValue("export/all_formats", ",".join(self.formats()))
        self.options.remember()
        self.accept()
        return True

    def _confirm_size(self, trace) -> bool:
        """Estimate the PNGs' time and memory first (one measured on a small picture) and
        ask when they would take long."""
        if "png" not in self.formats():
            return True
        pngs = sum(1 for entry in plan_exports(trace, None, None, ["png"]) if entry[3] == "png")
        stage = FOCUS_STAGE if trace.has(FOCUS_STAGE) else computed_stages(trace)[0]
        head = trace.heads[0] if is_per_head(stage) else None
        size, dpi = self.options.picture_size(), self.options.dpi()
        look = {"show_values": self.options.show_values(), "decimals": self.options.decimals()}
        with parts.wait_cursor():
            cost = estimate_export(trace, stage, head, "png", size, dpi, look, pictures=pngs)
        return confirm_export(self, cost, f"every stage at {size[0]}×{size[1]}")

    def _write(self, folder: Path, trace) -> list[Path]:
        """Every file of the ticked formats of ``trace`` into ``folder``; the paths written."""
        plan = plan_exports(trace, None, None, self.formats())
        self.message.setText(f"Writing {len(plan)} files…")
        QGuiApplication.processEvents()
        return export_all(
            trace,
            folder,
            self.formats(),
            name=self.name or None,
            cmap=self.prefs.colormap,
            signed_cmap=self.prefs.diverging_colormap,
            show_values=self.options.show_values(),
            size=self.options.picture_size(),
            dpi=self.options.dpi(),
            decimals=self.options.decimals(),
            scale=self.prefs.weights_scale,
        )
