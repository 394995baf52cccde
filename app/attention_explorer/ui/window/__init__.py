"""The main window and what frames it: the window and its docks, menus, preferences, theme,
help pages, the status line, opening and saving session files."""
