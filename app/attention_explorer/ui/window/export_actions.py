"""The window's export actions: File > Export, Export All and Copy Image, and a stage view's
own menu. They only gather the window's trace, preferences and name and hand them to the
export dialogs (ui/export/) or to ``attention_explorer.exporting``."""

from __future__ import annotations


class ExportActions:
    """The export methods of :class:`~attention_explorer.ui.window.main_window.MainWindow`
    (a mixin: they read its ``document``, ``session``, ``live``, ``prefs``, ``settings`` and
    ``status``)."""

    def export_name(self) -> str:
        """The name exports start from: the file's stem, or the session's name."""
        path = self.document.path
        return path.stem if path is not None else self.session.name

    def export_dialog(self, stage: str, head: int):
        """The export dialog for one stage and head, or None (with a message) when nothing
        is computed."""
        from attention_explorer.ui.export.export_dialog import ExportDialog

        if self.live.trace is None:
            self.status.show("Nothing to export: fix the problem shown first")
            return None
        return ExportDialog(
            self, self.live.trace, self.prefs, self.settings, stage, head, name=self.export_name()
        )

    def export_view(self, stage: str, head: int) -> None:
        """Open the export dialog on one stage and head (File > Export, Ctrl+E, a view's menu)."""
        dialog = self.export_dialog(stage, head)
        if dialog is not None and dialog.exec() and dialog.written is not None:
            self.status.show(f"Exported {dialog.written}")

    def export_all_dialog(self):
        """The dialog that exports every stage and head into a folder."""
        from attention_explorer.ui.export.export_all_dialog import ExportAllDialog

        return ExportAllDialog(
            self, self.live.full_trace, self.prefs, self.settings, name=self.export_name()
        )

    def export_all(self) -> None:
        """File > Export All: every stage and head, named predictably, into one folder."""
        dialog = self.export_all_dialog()
        if dialog.exec() and dialog.written:
            folder = dialog.written[0].parent
            self.status.show(f"Exported {len(dialog.written)} files to {folder}")

    def copy_view(self, stage: str, head: int) -> None:
        """Copy a finished picture of one stage to the clipboard, in the window's colours."""
        from PySide6.QtWidgets import QApplication

        from attention_explorer.exporting import ExportError, render_stage_image
        from attention_explorer.ui.widgets.colormaps import colormap_name_for

        trace = self.live.trace
        if trace is None:
            self.status.show("Nothing to copy: fix the problem shown first")
            return
        try:
            image = render_stage_image(
                trace,
                stage,
                head,
                cmap=colormap_name_for(stage, self.prefs),
                name=self.export_name(),
                show_values=self.prefs.show_values,
                scale=self.prefs.weights_scale,
            )
        except ExportError as exc:
            self.status.show(f"Not copied: {exc}")
            return
        QApplication.clipboard().setImage(image)
        self.status.show(f"Copied the {stage} picture to the clipboard")
