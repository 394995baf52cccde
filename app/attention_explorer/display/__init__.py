"""The display model shared by the window and the exports (Qt-free).

What a stage looks like once it is shown: shrunk to display resolution by the catalogue's rule
(:mod:`.shrink`), coloured on levels decided by its value kind and the chosen scale
(:mod:`.levels`; any array by its value kind, :mod:`.arrays`), with cell texts written by
the one number formatter and text colours picked
for contrast (:mod:`.cells`), token ticks (:mod:`.ticks`) and a title that says how it was
shrunk (:mod:`.frame`). The on-screen view and every exported picture draw a
:class:`~attention_explorer.display.frame.DisplayFrame`, so they agree by construction.
"""

from attention_explorer.display.arrays import difference_frame, frame_for_array
from attention_explorer.display.cells import cell_texts, dark_text
from attention_explorer.display.frame import DisplayFrame, build_frame, stage_heading, stage_picture
from attention_explorer.display.levels import SCALES, apply_scale, levels_for
from attention_explorer.display.shrink import DISPLAY_LIMIT, Shrunk, shrink

__all__ = [
    "DISPLAY_LIMIT",
    "SCALES",
    "DisplayFrame",
    "Shrunk",
    "apply_scale",
    "build_frame",
    "cell_texts",
    "dark_text",
    "difference_frame",
    "frame_for_array",
    "levels_for",
    "shrink",
    "stage_heading",
    "stage_picture",
]
