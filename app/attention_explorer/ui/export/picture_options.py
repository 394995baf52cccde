"""PictureOptions: the size, DPI, cell-values and decimals choices shared by the export dialogs."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from attention_explorer.exporting import DEFAULT_DPI, DEFAULT_SIZE
from attention_explorer.exporting.options import MAX_SIDE, MIN_SIDE


class PictureOptions(QWidget):
    """Width x height in pixels, DPI, "numbers in cells" and their decimals, remembered under
    ``export/``. Decimals default to "as on screen" (each stage's digits, "≈0" for tiny values)."""

    def __init__(self, settings: QSettings, show_values: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings
        self.width_box = self._spin(MIN_SIDE, MAX_SIDE, "export/width", DEFAULT_SIZE[0], " px")
        self.height_box = self._spin(MIN_SIDE, MAX_SIDE, "export/height", DEFAULT_SIZE[1], " px")
        self.dpi_box = self._spin(24, 2400, "export/dpi", DEFAULT_DPI, " dpi")
        self.values_box = QCheckBox("Write the numbers in the cells (small matrices)")
        self.values_box.setChecked(show_values)
        self.decimals_box = QComboBox()
        self.decimals_box.addItem("as on screen", None)
        for k in range(0, 9):
            self.decimals_box.addItem(str(k), k)
        remembered = self.decimals_box.findData(_int_or_none(settings.value("export/decimals")))
        self.decimals_box.setCurrentIndex(max(remembered, 0))
        size_row = QHBoxLayout()
        size_row.addWidget(self.width_box)
        size_row.addWidget(QLabel("×"))
        size_row.addWidget(self.height_box)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Size:", size_row)
        form.addRow("Resolution:", self.dpi_box)
        form.addRow("", self.values_box)
        form.addRow("Decimals:", self.decimals_box)

    def _spin(self, low: int, high: int, key: str, default: int, suffix: str) -> QSpinBox:
        box = QSpinBox()
        box.setRange(low, high)
        box.setSuffix(suffix)
        try:
            value = int(self.settings.value(key, default))
        except (TypeError, ValueError):
            value = default
        box.setValue(min(max(value, low), high))
        return box

    def picture_size(self) -> tuple[int, int]:
        """The picture's (width, height) in pixels."""
        return self.width_box.value(), self.height_box.value()

    def dpi(self) -> int:
        """Dots per inch: the physical size of the picture (and of a PDF page)."""
        return self.dpi_box.value()

    def show_values(self) -> bool:
        """True to write each cell's number into the picture."""
        return self.values_box.isChecked()

    def decimals(self) -> int | None:
        """Decimals of the cell numbers; None for the screen's digits."""
        return self.decimals_box.currentData()

    def remember(self) -> None:
        """Keep the chosen size, DPI and decimals for the next export."""
        decimals = self.decimals()
        self.settings.setValue("export/decimals", "" if decimals is None else decimals)
        self.settings.setValue("export/width", self.width_box.value())
        self.settings.setValue("export/height", self.height_box.value())
        self.settings.setValue("export/dpi", self.dpi_box.value())


def _int_or_none(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
