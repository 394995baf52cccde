"""Help > Sources: the tutorials the worked examples come from, section by section.

Each example file names its tutorial and section in ``experiment.source`` (“Title”, section)
and its notes give the tutorial's values beside the ones the app computes. This page lists
them grouped by tutorial, every text escaped (plain text shown as rich text, never markup).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget


@dataclass(frozen=True)
class SourceEntry:
    """One example as cited: its tutorial, section, title and notes ((title, text) pairs)."""

    tutorial: str
    section: str
    example: str
    notes: tuple[tuple[str, str], ...]


def split_source(source: str) -> tuple[str, str]:
    """(tutorial title, section) of a source written “Title”, section; ("", source) otherwise."""
    text = " ".join(source.split())
    if text.startswith("“") and "”" in text:
        title, _, rest = text[1:].partition("”")
        return title, rest.lstrip(", ").strip()
    return "", text


def tutorial_sources() -> list[SourceEntry]:
    """Every shipped example that comes from a tutorial, in menu order."""
    from attention_explorer.session.examples import example_path, list_examples

    entries = []
    for info in list_examples():
        try:
            doc = json.loads(example_path(info.key).read_text(encoding="utf-8"))
        except (KeyError, OSError, ValueError):
            continue
        experiment = doc.get("experiment") if isinstance(doc, dict) else None
        source = experiment.get("source") if isinstance(experiment, dict) else None
        if not isinstance(source, str) or not source.strip():
            continue
        tutorial, section = split_source(source)
        notes = tuple(
            (str(n.get("title", "")), str(n.get("text", "")))
            for n in doc.get("notes", [])
            if isinstance(n, dict)
        )
        entries.append(SourceEntry(tutorial, section, info.title, notes))
    return entries


def sources_html(entries: list[SourceEntry]) -> str:
    """The page as rich text: one heading per tutorial, each example under its section."""
    parts = ["<h3>Where the worked examples come from</h3>"]
    tutorials: list[str] = []
    for entry in entries:
        if entry.tutorial not in tutorials:
            tutorials.append(entry.tutorial)
    for tutorial in tutorials:
        parts.append(f"<h4>{html.escape(tutorial or 'Other sources')}</h4>")
        for entry in (e for e in entries if e.tutorial == tutorial):
            parts.append(
                f"<p><b>{html.escape(entry.example)}</b><br><i>{html.escape(entry.section)}</i></p>"
            )
            notes = [n for n in entry.notes if n[0] != "Where this example comes from"]
            items = "".join(
                f"<li><b>{html.escape(title)}</b> {html.escape(text)}</li>" for title, text in notes
            )
            if items:
                parts.append(f"<ul>{items}</ul>")
    return "".join(parts)


class SourcesPage(QDialog):
    """A scrollable page listing each tutorial, its sections and the examples drawn from them."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("sources_page")
        self.setWindowTitle("Sources")
        self.resize(720, 560)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(False)
        self.entries = tutorial_sources()
        self.browser.setHtml(sources_html(self.entries))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)


def show_sources(parent: QWidget) -> SourcesPage:
    """Open Help > Sources (modeless) and return the page."""
    page = SourcesPage(parent)
    page.setModal(False)
    page.show()
    return page
