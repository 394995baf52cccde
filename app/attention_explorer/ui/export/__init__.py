"""The export dialogs: one view, every view, and their picture options."""
