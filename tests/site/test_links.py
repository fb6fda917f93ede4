"""Every internal link and anchor of the built site resolves, in every language."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup
from sitecheck import layout, links


def test_internal_links_resolve(site_root: Path, language: str) -> None:
    site_url = layout.built_site_url(site_root, language)
    problems = links.broken_links(site_root, site_url, folders=[language])
    assert not problems, f"{len(problems)} broken links:\n" + "\n".join(problems)


def test_root_pages_links_resolve(site_root: Path, languages: list[str]) -> None:
    site_url = layout.built_site_url(site_root, languages[0])
    problems = links.broken_links(site_root, site_url, folders=[])
    assert not problems, "\n".join(problems)


def test_root_page_lists_every_language(site_root: Path, languages: list[str]) -> None:
    """Without JavaScript, the root page still leads to each built language."""
    soup = BeautifulSoup((site_root / "index.html").read_text(encoding="utf-8"), "html.parser")
    listed = {a["href"] for a in soup.find_all("a", href=True)}
    missing = [code for code in languages if f"{code}/index.html" not in listed]
    assert not missing, f"the root page has no link to {missing} (links: {sorted(listed)})"


def test_every_language_has_the_same_pages(site_root: Path, languages: list[str]) -> None:
    """A switcher can only land on the same page if every language has it."""
    english = set(layout.pages(site_root, languages[0]))
    for language in languages[1:]:
        other = set(layout.pages(site_root, language))
        assert other == english, (
            f"{language} lacks {sorted(english - other)}; has extra {sorted(other - english)}"
        )
