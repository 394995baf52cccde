"""The hover tooltip of a heatmap cell: the explanation's first line bold, the rest below.

Token text and numbers are escaped before they enter the rich text, so a token such as
``<b>`` is shown as typed, never interpreted.
"""

from __future__ import annotations

import html


def tooltip_html(text: str) -> str:
    """Rich text for the plain explanation ``text``: first line bold, line breaks kept."""
    head, _, rest = html.escape(text).partition("\n")
    return f"<p style='white-space:pre'><b>{head}</b><br>{rest.replace(chr(10), '<br>')}</p>"
