"""The window fixtures (``window``, ``dialogs``) for every test in tests/ui: see window_fixtures."""

from window_fixtures import dialogs, window  # noqa: F401 - fixtures pytest finds here
