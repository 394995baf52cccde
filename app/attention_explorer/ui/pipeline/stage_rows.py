"""How the stage panel packs its views into lines, and which views a walkthrough step gathers.

Pure functions of stage names and pixel widths, so the panel's layout rules can be read and
tested on their own; and the header's "Show every view" button.
"""

from __future__ import annotations

from PySide6.QtWidgets import QToolButton

from attention_explorer.core.stages import panel_stages

#: The panel group that folds away (the inputs X … V); every other group stays in view.
FOLDING_GROUP = "inputs"


def input_group() -> tuple[str, ...]:
    """The stages of the foldable inputs group, in pipeline order (from the catalogue)."""
    return panel_stages(FOLDING_GROUP)


def pack_rows(shown, need: dict[str, int], width: int) -> tuple[tuple[str, ...], ...]:
    """Lines of views in pipeline order: the input group's views flow together, then the
    views from the scores on; a new line when the next view's ``need`` (pixels) no longer
    fits ``width``; at most three views per line.

    Flowing (rather than one pipeline row per line) keeps the scores and the weights within
    two lines of a narrow panel: scores, scaled | masked, weights.
    """
    lines: list[tuple[str, ...]] = []
    order = panel_stages()
    folding = input_group()
    groups = ([s for s in order if s in folding], [s for s in order if s not in folding])
    for group in groups:
        line: list[str] = []
        used = 0
        for stage in (s for s in group if s in shown):
            if line and (used + need[stage] > width or len(line) == 3):
                lines.append(tuple(line))
                line, used = [], 0
            line.append(stage)
            used += need[stage]
        if line:
            lines.append(tuple(line))
    return tuple(lines)


def lines_spanned(lines, stages) -> tuple[int, int]:
    """(first, count): the consecutive ``lines`` (tuples of stage names) that hold every one
    of ``stages`` laid out, from the first line with one of them to the last; (0, 0) when
    none is."""
    hits = [k for k, line in enumerate(lines) if any(s in line for s in stages)]
    return (hits[0], hits[-1] - hits[0] + 1) if hits else (0, 0)


#: The least width of a view laid out beside a walkthrough step's other views.
GATHERED_WIDTH = 230


def gathered_rows(stages, width: int) -> tuple[tuple[str, ...], ...]:
    """Lines of a walkthrough step's ``stages`` laid out alone, in the order given (the
    operands, then the result: weights, V, output), up to three a line in ``width`` pixels."""
    stages = tuple(stages)
    per_line = max(1, min(3, width // GATHERED_WIDTH))
    return tuple(stages[k : k + per_line] for k in range(0, len(stages), per_line))


def toggle_texts(inputs: tuple[str, ...], is_open: bool) -> tuple[str, str]:
    """(text, tooltip) of the inputs group's toggle for the short names ``inputs``."""
    listed = ", ".join(inputs)
    text = f"Inputs: {listed}" + ("" if is_open else " (folded)")
    tip = (
        ("Fold" if is_open else "Show")
        + f" the input views ({listed}). They fold by themselves when the panel is too"
        " short to show them with the scores and the weights; Ctrl+[ and Ctrl+] step"
        " through every stage."
    )
    return text, tip


def show_all_button(clicked) -> QToolButton:
    """The header's "Show every view" button (hidden until a step's views are laid out
    alone), calling ``clicked``."""
    button = QToolButton()
    button.setObjectName("showAllViews")
    button.setText("Show every view")
    button.setToolTip(
        "This step's views are shown on their own, so that all of them fit on screen."
        " Show every stage again (the next step does too)."
    )
    button.clicked.connect(clicked)
    button.hide()
    return button
