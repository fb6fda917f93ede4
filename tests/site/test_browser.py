"""The built site in a real browser: pages, language switcher, root page, search, downloads."""

from __future__ import annotations

import contextlib
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import compperf_project  # docs/_ext, on sys.path via conftest.py
import nbformat
import pytest
from babel.messages.pofile import read_po
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from sitecheck import browser, layout
from sitecheck.visits import COLOR_SCHEMES, Visits

PROJECT = compperf_project.load()
REPO = Path(__file__).resolve().parents[2]

# Per search language (``search`` in [tool.compperf.languages]): a word a reader would
# type, and the page it must find. The words are in that language (Chinese also finds the
# English term), so they exercise its search splitter and stemmer on translated text. A
# language not listed here searches for a word of that page's translated title.
SEARCH_PAGE = "auto_examples/asynchronous/plot_async_matmul"
SEARCHES = {
    "en": [("synchronize", "auto_examples/asynchronous/plot_async_matmul.html")],
    "zh": [
        ("同步", "auto_examples/asynchronous/plot_async_matmul.html"),
        ("synchronize", "auto_examples/asynchronous/plot_async_matmul.html"),
    ],
    "ru": [("синхронизации", "auto_examples/asynchronous/plot_async_matmul.html")],
}
# Browser locale -> the language folder the root page must send that reader to: each
# language's own tag, and a language the site does not offer (the first language).
_UNOFFERED = next(
    tag
    for tag in ("de-DE", "fr-FR", "ja-JP", "tlh")
    if tag.split("-")[0] not in {lang.tag.split("-")[0] for lang in PROJECT.languages}
)
ROOT_LANGUAGE_CHOICES = [(lang.tag, lang.code) for lang in PROJECT.languages] + [
    (_UNOFFERED, PROJECT.codes[0])
]
# Served for any missing URL, so its switcher leads to each language's home page instead.
NO_SAME_PAGE = ("404.html",)


def test_every_page_loads_cleanly(language: str, page_visits: Visits) -> None:
    """No console error, script error, failed request or HTTP error on any page."""
    problems = [
        f"{language}/{visit.path}: {p}"
        for visit in page_visits.desktop(language, "light")  # every page, opened once
        for p in visit.problems
    ]
    assert not problems, "\n".join(problems)


def test_root_pages_load_cleanly(site_url: str, new_page: Callable[..., Page]) -> None:
    page = new_page(locale="en-US")
    problems = []
    for path in ("index.html", "404.html"):
        problems += [f"{path}: {p}" for p in browser.open_logged(page, site_url + path)]
    assert not problems, "\n".join(problems)


def test_switcher_leads_to_the_same_page(
    site_url: str,
    site_root: Path,
    languages: list[str],
    language: str,
    new_page: Callable[..., Page],
) -> None:
    others = [code for code in languages if code != language]
    if not others:
        pytest.skip(f"only {language} is built: no other language to switch to yet")
    page = new_page()
    problems = []
    for path in layout.pages(site_root, language):
        if path not in NO_SAME_PAGE:
            problems += browser.switcher_problems(page, site_url, language, path, others)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("locale", "expected"), ROOT_LANGUAGE_CHOICES)
def test_root_page_picks_the_browser_language(
    site_url: str, languages: list[str], new_page: Callable[..., Page], locale: str, expected: str
) -> None:
    if expected not in languages:
        pytest.skip(
            f"{expected} is not built yet: the root page cannot send {locale} readers there"
        )
    page = new_page(locale=locale)
    page.goto(site_url)
    page.wait_for_url(f"{site_url}{expected}/index.html", timeout=5000)


@pytest.mark.parametrize("scheme", list(COLOR_SCHEMES))
def test_code_and_output_contrast(language: str, page_visits: Visits, scheme: str) -> None:
    """Code blocks and captured outputs keep WCAG AA contrast (4.5:1) in light and dark."""
    visits = page_visits.desktop(language, scheme)  # every page, opened in this scheme
    blocks = sum(visit.blocks for visit in visits)
    problems = [f"{language}/{visit.path}: {p}" for visit in visits for p in visit.contrast]
    assert blocks, f"no code or output blocks found in {language} (selector changed?)"
    assert not problems, "\n".join(problems)


def test_screenshots_of_example_pages(site_root: Path, language: str, page_visits: Visits) -> None:
    """Full-page screenshots, light and dark, for a person to look at (build folder).

    Taken on the contrast check's visits of the same pages in the same schemes.
    """
    saved = [
        visit.screenshot
        for scheme in ("light", "dark-system")
        for visit in page_visits.desktop(language, scheme)
        if visit.screenshot is not None
    ]
    assert saved, f"no example pages in {language}"
    assert len(saved) == 2 * len(layout.example_pages(site_root, language))
    assert all(path.stat().st_size > 10_000 for path in saved)


def _search_terms(language: str) -> list[tuple[str, str]]:
    """The terms to search for in ``language``: listed above, or from its catalog."""
    search = PROJECT.language(language).search
    if search in SEARCHES:
        return SEARCHES[search]
    catalog = REPO / "docs" / "locales" / language / "LC_MESSAGES" / f"{SEARCH_PAGE}.po"
    with catalog.open("rb") as file:
        title = next(m.string for m in read_po(file) if m.id)  # the page's title first
    words = re.findall(r"[^\W\d_]{4,}", title)
    assert words, f"no word to search for in {language}'s title {title!r}: add to SEARCHES"
    return [(max(words, key=len), f"{SEARCH_PAGE}.html")]


def test_search_finds_a_term(site_url: str, language: str, new_page: Callable[..., Page]) -> None:
    page = new_page()
    for term, expected in _search_terms(language):
        page.goto(f"{site_url}{language}/search.html?q={term}")
        # Sphinx lists hits one by one, fetching each page's text for its snippet, and
        # shows the summary only after the last: wait for the expected hit instead.
        hit = f'#search-results ul.search li a[href*="{expected}"]'
        with contextlib.suppress(PlaywrightTimeoutError):
            page.wait_for_selector(hit, timeout=30000)
        found = page.eval_on_selector_all(
            "#search-results ul.search li a", "as => as.map(a => a.href)"
        )
        assert f"{site_url}{language}/{expected}" in [
            h.split("?")[0].split("#")[0] for h in found
        ], f"searching {term!r} in {language} did not find {expected}; found {found}"


def _check_download(path: Path, name: str) -> None:
    data = path.read_bytes()
    if name.endswith(".py"):
        compile(data, name, "exec")
    elif name.endswith(".ipynb"):
        notebook = nbformat.reads(data.decode("utf-8"), as_version=nbformat.NO_CONVERT)
        assert json.loads(data)["nbformat"] == 4, f"{name} is not nbformat 4"
        nbformat.validate(notebook)
    elif name.endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            assert archive.testzip() is None, f"{name} is corrupt"
            members = archive.namelist()
            assert members, f"{name} is empty"
            for member in members:
                extracted = path.with_name(f"{path.name}-{Path(member).name}")
                extracted.write_bytes(archive.read(member))
                _check_download(extracted, member)
    else:
        raise AssertionError(f"unexpected download {name}")


def test_downloads_are_real_files(
    site_url: str, site_root: Path, language: str, new_page: Callable[..., Page], tmp_path: Path
) -> None:
    """Each example's .py, .ipynb and .zip, and each chapter's zips, download and open."""
    page = new_page(accept_downloads=True)
    paths = layout.example_pages(site_root, language)
    chapters = sorted({str(Path(path).parent / "index.html") for path in paths})
    kinds = set()
    for path in paths + chapters:
        page.goto(f"{site_url}{language}/{path}")
        links = page.locator("a.download")
        assert links.count(), f"{language}/{path} has no download links"
        for index in range(links.count()):
            with page.expect_download() as info:
                links.nth(index).click()
            download = info.value
            name = download.suggested_filename
            saved = tmp_path / f"{len(kinds)}-{index}-{name}"
            download.save_as(saved)
            _check_download(saved, name)
            kinds.add(Path(name).suffix)
    assert kinds == {".py", ".ipynb", ".zip"}, f"downloads seen: {sorted(kinds)}"
