"""Help > Sources lists each tutorial by title, its sections, and the values beside ours."""

from __future__ import annotations

import re

import window_fixtures

from attention_explorer.ui.window.sources_page import SourcesPage, split_source, tutorial_sources

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def test_split_source_reads_title_and_section():
    assert split_source("“A Tutorial”, 4. Steps") == ("A Tutorial", "4. Steps")
    assert split_source("somewhere") == ("", "somewhere")


def test_sources_group_examples_by_tutorial_with_their_sections():
    entries = tutorial_sources()
    tutorials = {e.tutorial for e in entries}
    assert "Attention Mechanism: The Heart of Transformers" in tutorials
    assert len(tutorials) == 4 and all(e.section for e in entries)
    three = next(e for e in entries if e.section.startswith("4. Step-by-Step"))
    assert any("0.2" in text or "tutorial" in text for _, text in three.notes)


def test_the_page_shows_titles_sections_and_notes_as_plain_text(qtbot):
    page = SourcesPage()
    qtbot.addWidget(page)
    text = page.browser.toPlainText()
    assert "How Transformers Think: Self-Attention and Multi-Head Attention" in text
    assert "6. Causal Masking and Padding Masks" in text
    assert "The tutorial gives about [0.045, 0.91, 0.045]" in text  # its values beside ours
    assert not re.search(r"seed 0\d\d|issue \d", text, re.I)


def test_help_menu_opens_the_sources_page(window, qtbot):
    help_menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Help"
    )
    action = next(a for a in help_menu.actions() if a.text().replace("&", "") == "Sources")
    action.trigger()
    page = window.sources_page
    qtbot.waitUntil(page.isVisible)
    assert page.windowTitle() == "Sources" and page.entries
