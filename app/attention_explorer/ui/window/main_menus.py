"""The main window's menus and keyboard shortcuts."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu

from attention_explorer.ui.state.preferences import DIVERGING_MAPS, SCALES, SEQUENTIAL_MAPS
from attention_explorer.ui.walkthrough.walkthrough_actions import (
    TeachingParts,
    add_teaching_actions,
)
from attention_explorer.ui.window.help_dialogs import show_about, show_formulas


@dataclass
class Menus:
    """The actions tests and other code need to reach, and the teacher's tools (presenter
    mode and the handout) the menus made."""

    undo: QAction
    redo: QAction
    save: QAction
    export: QAction
    next_step: QAction
    back_step: QAction
    show_values: QAction
    recent: QMenu
    examples: QMenu
    open_model: QAction
    teaching: TeachingParts


def _action(window, menu: QMenu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
    action = QAction(text, window)
    if isinstance(shortcut, QKeySequence.StandardKey):
        action.setShortcuts(shortcut)  # every binding of the platform (Ctrl+Y and Ctrl+Shift+Z)
    elif shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if tip:
        action.setStatusTip(tip)
    action.triggered.connect(lambda *_: slot())
    menu.addAction(action)
    return action


def _choice_menu(window, menu: QMenu, title: str, options, current: str, assign) -> None:
    sub = menu.addMenu(title)
    group = QActionGroup(window)
    for option in options:
        action = QAction(option, window, checkable=True)
        action.setChecked(option == current)
        action.triggered.connect(partial(assign, option))
        group.addAction(action)
        sub.addAction(action)


def _call_focused(method: str) -> None:
    """Send Copy/Paste to the focused widget or the nearest parent that implements it."""
    widget = QApplication.focusWidget()
    while widget is not None:
        handler = getattr(widget, method, None)
        if callable(handler):
            handler()
            return
        widget = widget.parentWidget()


def build_menus(window) -> Menus:
    """Create File, Edit, View, Examples, Walkthrough and Help for ``window``."""
    bar = window.menuBar()
    doc = window.document

    file_menu = bar.addMenu("&File")
    _action(window, file_menu, "&New", doc.new, QKeySequence.StandardKey.New)
    _action(window, file_menu, "&Open…", lambda: doc.open(), QKeySequence.StandardKey.Open)
    open_model = _action(
        window,
        file_menu,
        "Open &Model…",
        window.open_model,
        "Ctrl+Shift+M",
        "Load a real model (BERT, MiniLM, GPT-2) and explore its attention",
    )
    recent = file_menu.addMenu("Open &Recent")
    save = _action(window, file_menu, "&Save", doc.save, QKeySequence.StandardKey.Save)
    _action(window, file_menu, "Save &As…", doc.save_as, QKeySequence.StandardKey.SaveAs)
    file_menu.addSeparator()
    export = _action(
        window,
        file_menu,
        "&Export…",
        lambda: window.export_view(window.session.selected_stage, window.session.selected_head),
        "Ctrl+E",
        "Save a picture or the numbers of a stage",
    )
    _action(window, file_menu, "Export &All…", window.export_all, "Ctrl+Shift+E")
    _action(
        window,
        file_menu,
        "Copy &Image",
        lambda: window.copy_view(window.session.selected_stage, window.session.selected_head),
        "Ctrl+Shift+C",
    )
    file_menu.addSeparator()
    _action(window, file_menu, "&Quit", window.close, QKeySequence.StandardKey.Quit)

    def fill_recent() -> None:
        recent.clear()
        files = doc.recent_files()
        for path in files:
            _action(window, recent, path, partial(doc.open, path))
        recent.setEnabled(bool(files))

    doc.recent_changed.connect(fill_recent)
    fill_recent()

    edit = bar.addMenu("&Edit")
    history = window.history
    undo = _action(window, edit, "&Undo", history.undo, QKeySequence.StandardKey.Undo)
    redo = _action(window, edit, "&Redo", history.redo, QKeySequence.StandardKey.Redo)

    def refresh_undo() -> None:
        undo.setEnabled(history.can_undo)
        redo.setEnabled(history.can_redo)
        undo.setText(f"&Undo {history.undo_label}".rstrip())
        redo.setText(f"&Redo {history.redo_label}".rstrip())

    history.changed.connect(refresh_undo)
    refresh_undo()
    edit.addSeparator()
    _action(window, edit, "&Copy cells", partial(_call_focused, "copy_selection"))
    _action(window, edit, "&Paste cells", partial(_call_focused, "paste"))

    view = bar.addMenu("&View")
    prefs = window.prefs
    _choice_menu(
        window,
        view,
        "Colour map",
        SEQUENTIAL_MAPS,
        prefs.colormap,
        lambda name, *_: setattr(prefs, "colormap", name),
    )
    _choice_menu(
        window,
        view,
        "Colour map for scores",
        DIVERGING_MAPS,
        prefs.diverging_colormap,
        lambda name, *_: setattr(prefs, "diverging_colormap", name),
    )
    _choice_menu(
        window,
        view,
        "Colour scale for weights",
        SCALES,
        prefs.weights_scale,
        lambda name, *_: setattr(prefs, "weights_scale", name),
    )
    _choice_menu(
        window,
        view,
        "Theme",
        ("system", "light", "dark"),
        prefs.theme,
        lambda name, *_: setattr(prefs, "theme", name),
    )
    show_values = QAction("Show &values in cells", window, checkable=True)
    show_values.setShortcut(QKeySequence("Ctrl+Shift+V"))
    show_values.setChecked(prefs.show_values)
    show_values.toggled.connect(lambda on: setattr(prefs, "show_values", bool(on)))
    view.addAction(show_values)
    view.addSeparator()
    keys = window.stages.keys
    next_stage = _action(
        window,
        view,
        "Next stage",
        partial(keys.step_stage, 1),
        None,
        "Select the next stage view (Ctrl+]); arrow keys move its selected cell",
    )
    back_stage = _action(
        window,
        view,
        "Previous stage",
        partial(keys.step_stage, -1),
        None,
        "Select the previous stage view (Ctrl+[); arrow keys move its selected cell",
    )
    for action, text in ((next_stage, "Ctrl+]"), (back_stage, "Ctrl+[")):
        action.setText(f"{action.text()}\t{text}")  # the panel's own shortcut does the work
    view.addSeparator()
    docks = (window.controls_dock, window.heads_dock, window.walk_dock, window.arithmetic_dock)
    for dock in (*docks, window.model_dock):
        view.addAction(dock.toggleViewAction())

    examples = bar.addMenu("E&xamples")
    _fill_examples(window, examples)

    # Ctrl+I brings the panel forward; the View menu lists it once, as the dock's toggle.
    arithmetic = _action(window, view, "Cell &arithmetic", window.show_cell_arithmetic, "Ctrl+I")
    view.removeAction(arithmetic)
    window.addAction(arithmetic)
    _action(window, view, "&Long-context summary", window.show_summary)

    teaching = add_teaching_actions(window, file_menu, view)  # File > Handout, F5 Presenter

    walk = bar.addMenu("&Walkthrough")
    back_step = _action(window, walk, "&Back", window.walkthrough.go_back, "Alt+Left")
    next_step = _action(window, walk, "&Next", window.walkthrough.go_next, "Alt+Right")
    _action(window, walk, "&Restart", window.walkthrough.restart, "Alt+Home")

    help_menu = bar.addMenu("&Help")
    _action(window, help_menu, "&Formula reference", partial(show_formulas, window), "F1")
    _action(window, help_menu, "&Sources", window.show_sources)
    _action(window, help_menu, "&About", partial(show_about, window))
    return Menus(
        undo,
        redo,
        save,
        export,
        next_step,
        back_step,
        show_values,
        recent,
        examples,
        open_model,
        teaching,
    )


def example_source(key: str) -> str:
    """Which tutorial an example comes from (its ``experiment.source``), '' when unsaid."""
    import json

    from attention_explorer.session.examples import example_path

    try:
        doc = json.loads(example_path(key).read_text(encoding="utf-8"))
    except (KeyError, OSError, ValueError):
        return ""
    experiment = doc.get("experiment") if isinstance(doc, dict) else None
    source = experiment.get("source") if isinstance(experiment, dict) else None
    return " ".join(source.split()) if isinstance(source, str) else ""


def _fill_examples(window, menu: QMenu) -> None:
    try:
        from attention_explorer.session.examples import list_examples

        examples = list_examples()
    except Exception as exc:  # a broken resource must not stop the window
        menu.addAction(f"(examples unavailable: {exc})").setEnabled(False)
        return
    groups: dict[str, QMenu] = {}
    menu.setToolTipsVisible(True)
    for example in examples:
        sub = groups.get(example.group)
        if sub is None:
            sub = groups[example.group] = menu.addMenu(example.group)
            sub.setToolTipsVisible(True)
        action = _action(window, sub, example.title, partial(window.open_example, example.key))
        source = example_source(example.key)
        action.setStatusTip(f"{example.summary} (from {source})" if source else example.summary)
        action.setToolTip(f"From the tutorial {source}" if source else example.title)
