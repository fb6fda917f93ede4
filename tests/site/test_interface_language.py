"""No English in the site's own interface on the other languages' pages (sitecheck.interface)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import compperf_project  # docs/_ext, on sys.path via conftest.py
import pytest
import test_browser
from playwright.sync_api import Page
from sitecheck import interface, layout
from sitecheck.interface import Snippet
from sitecheck.visits import Visits

PROJECT = compperf_project.load()
SOURCE_LANGUAGE = PROJECT.codes[0]
# A query no page matches: the search page then says so, in the page's language.
NO_HITS = "qzxjvwk"
# The copy button's tooltip flips to its after-click text for 2 s (sphinx-copybutton).
CLIPBOARD = ["clipboard-read", "clipboard-write"]


def _translated(language: str) -> None:
    if language == SOURCE_LANGUAGE:
        pytest.skip(f"{language} is the source language: its interface is English")


def _open(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("load")


def _search_pages(language: str) -> list[str]:
    """The search page with a query that finds a page and one that finds none."""
    term = test_browser._search_terms(language)[0][0]
    return [f"search.html?q={query}" for query in (term, NO_HITS)]


def _interface(page: Page, site_url: str, language: str, page_visits: Visits) -> Iterator[Snippet]:
    """Each page's interface text, the search page's with and without hits included."""
    for visit in page_visits.desktop(language, "light"):  # every page, opened once
        yield from visit.snippets
    for path in _search_pages(language):
        _open(page, f"{site_url}{language}/{path}")
        # Sphinx replaces the pulsing "Searching..." title once the last hit is listed.
        page.wait_for_function(
            "() => { const h = document.querySelector('#search-results h2');"
            " return h !== null && h.querySelector('span') === null; }",
            timeout=60000,
        )
        summary = page.inner_text("#search-results p.search-summary").strip()
        yield Snippet(f"{language}/{path}: p.search-summary", summary or "(empty)")
        yield from interface.collect(page, f"{language}/{path}")


def test_interface_speaks_the_page_language(
    site_url: str, language: str, new_page: Callable[..., Page], page_visits: Visits
) -> None:
    """Every page: no English in its interface text or in what a screen reader speaks."""
    _translated(language)
    snippets = [
        s
        for s in _interface(new_page(), site_url, language, page_visits)
        if not interface.figure_alt(s)
    ]
    found = interface.problems(snippets)
    assert not found, f"{len(found)} English interface text(s):\n" + "\n".join(found)


def test_figure_descriptions_speak_the_page_language(
    site_root: Path, language: str, page_visits: Visits
) -> None:
    """The alt text a screen reader speaks for each gallery figure."""
    _translated(language)
    examples = set(layout.example_pages(site_root, language))
    figures = [
        s
        for visit in page_visits.desktop(language, "light")  # the interface check's visits
        if visit.path in examples
        for s in visit.snippets
        if interface.figure_alt(s)
    ]
    if not figures:
        pytest.skip(f"no gallery figure in {language}'s example pages (built with --no-exec?)")
    found = interface.problems(figures)
    assert not found, f"{len(found)} English figure description(s):\n" + "\n".join(found)


def test_root_page_speaks_no_language_unmarked(
    site_url: str, languages: list[str], new_page: Callable[..., Page]
) -> None:
    """The root page talks to every reader: English only where it is marked ``lang="en"``."""
    page = new_page(locale="en-US", java_script_enabled=False)  # stay on the root page
    _open(page, site_url)
    found = []
    for language in languages:
        if language == SOURCE_LANGUAGE:
            continue
        page.evaluate(f"document.documentElement.lang = {PROJECT.language(language).tag!r}")
        found += interface.problems(interface.collect(page, f"index.html ({language})"))
    assert not found, "\n".join(found)


def test_copy_button_speaks_the_page_language(
    site_url: str, site_root: Path, language: str, new_page: Callable[..., Page]
) -> None:
    """The copy button's tooltip, before and after a click, is in the page's language."""
    _translated(language)
    page = new_page(permissions=CLIPBOARD)
    path = layout.example_pages(site_root, language)[0]
    _open(page, f"{site_url}{language}/{path}")
    button = page.locator("button.copybtn").first
    button.wait_for(state="attached")
    before = button.get_attribute("data-tooltip") or ""
    label = button.locator("svg title").text_content() or ""
    button.hover()
    button.click()
    after = button.get_attribute("data-tooltip") or ""
    copied = page.evaluate("navigator.clipboard.readText()")
    problems = [
        f"{language}/{path}: copy button {name} {text!r} is English"
        for name, text in (("tooltip", before), ("icon title", label), ("after click", after))
        if interface.english_words(text) or not text.strip()
    ]
    assert not problems, "\n".join(problems)
    assert after != before, f"{language}/{path}: the tooltip did not change on click ({after!r})"
    assert copied.strip(), f"{language}/{path}: the click copied nothing"
