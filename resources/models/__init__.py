"""Models shipped with the app, one folder per id (see attention_explorer.pretrained.bundled)."""
