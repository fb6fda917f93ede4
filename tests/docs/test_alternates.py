"""Multilingual metadata for search engines: hreflang in each page's head and sitemap."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from xml.etree import ElementTree

import compperf_project
import pytest
import tiny_site
from compperf_docs.publish import alternates

ROOT_URL = "https://example.org/site/"

CONF = tiny_site.conf(
    'sitemap_excludes = ["search.html", "genindex.html"]\n',
    extensions=("sphinx_gallery.gen_gallery", "sphinx_sitemap", "compperf_docs"),
    exclude=("_build",),
    chapters="[]",
)

INDEX = "Tiny\n====\n\n.. toctree::\n\n   guide/page\n"
PAGE = "A page\n======\n\nText.\n"
LANGUAGE_TAGS = {language.tag for language in compperf_project.languages()}
XHTML = "{http://www.w3.org/1999/xhtml}link"


@pytest.fixture(scope="module")
def built(tiny_sites: tiny_site.Sites) -> SimpleNamespace:
    # The tiny site's own [tool.compperf]: the real languages (its gallery lists no chapter).
    project = compperf_project.load().replace(site_url=ROOT_URL)
    site = tiny_sites.make(
        "alternates", project=project, conf=CONF, index=INDEX, pages={"guide/page.rst": PAGE}
    )
    result = _build(site)
    # Not -W: the compperf wheel that `nox -s docs` builds is missing here, which warns.
    assert result.returncode == 0, result.stdout + result.stderr
    return SimpleNamespace(docs=site.docs, html=site.html, site=site, log=result.stderr)


def _build(site: tiny_site.Site):
    return site.build(language="en", strict=False, nitpicky=False, env=site.env(site_url=ROOT_URL))


def _head_links(page: Path) -> dict[str, str]:
    head = page.read_text("utf-8").split("</head>")[0]
    return dict(re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)"', head))


def test_every_page_names_each_language_and_a_default(built: SimpleNamespace) -> None:
    links = _head_links(built.html / "en" / "guide" / "page.html")
    languages = compperf_project.languages()
    assert links == {
        **{lang.tag: f"{ROOT_URL}{lang.code}/guide/page.html" for lang in languages},
        "x-default": f"{ROOT_URL}{languages[0].code}/guide/page.html",
    }
    # The home page's default is the root address, which picks the reader's language.
    assert _head_links(built.html / "en" / "index.html")["x-default"] == ROOT_URL
    # Pages left out of the sitemap get none.
    assert _head_links(built.html / "en" / "search.html") == {}


def test_sitemap_lists_the_same_alternates(built: SimpleNamespace) -> None:
    root = ElementTree.parse(built.html / "en" / "sitemap.xml").getroot()
    urls = {
        url.findtext("{http://www.sitemaps.org/schemas/sitemap/0.9}loc"): {
            link.get("hreflang"): link.get("href") for link in url.iter(XHTML)
        }
        for url in root
    }
    page = f"{ROOT_URL}en/guide/page.html"
    assert set(urls) == {f"{ROOT_URL}en/index.html", page}
    assert urls[page] == _head_links(built.html / "en" / "guide" / "page.html")
    assert urls[f"{ROOT_URL}en/index.html"]["x-default"] == ROOT_URL
    for links in urls.values():
        assert set(links) == LANGUAGE_TAGS | {alternates.X_DEFAULT}


def test_rebuild_that_writes_no_page_keeps_the_sitemap(built: SimpleNamespace) -> None:
    """sphinx-sitemap leaves the last sitemap (x-default included) when no page is written."""
    sitemap = built.html / "en" / "sitemap.xml"
    before = sitemap.read_bytes()
    result = _build(built.site)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sitemap" not in result.stderr
    assert sitemap.read_bytes() == before


def test_root_page_names_the_languages_it_sends_readers_to(built: SimpleNamespace) -> None:
    links = _head_links(built.html / "index.html")
    assert links == {"en": f"{ROOT_URL}en/index.html", "x-default": ROOT_URL}


def _sitemap_pages(html: Path) -> list[str]:
    root = ElementTree.parse(html / "en" / "sitemap.xml").getroot()
    return [url.findtext("{http://www.sitemaps.org/schemas/sitemap/0.9}loc") for url in root]


def test_sitemap_after_an_incremental_build_lists_what_a_clean_build_lists(
    built: SimpleNamespace, tmp_path: Path
) -> None:
    """A build that writes some pages (a new one, and the index that lists it) still lists
    the pages it did not write."""
    (built.docs / "guide" / "other.rst").write_text("Other\n=====\n\nText.\n", encoding="utf-8")
    index = built.docs / "index.rst"
    index.write_text(INDEX + "   guide/other\n", encoding="utf-8")
    result = _build(built.site)
    assert result.returncode == 0, result.stdout + result.stderr
    incremental = _sitemap_pages(built.html)
    clean = tiny_site.Site(tmp_path)
    shutil.copytree(built.site.root, clean.root, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("_build"))  # fmt: skip
    result = _build(clean)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(incremental) == sorted(
        page.replace(str(tmp_path), str(built.site.root)) for page in _sitemap_pages(clean.html)
    )
    assert f"{ROOT_URL}en/guide/page.html" in incremental
    assert len(incremental) == 3
