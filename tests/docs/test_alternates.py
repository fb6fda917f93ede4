"""Multilingual metadata for search engines: hreflang in each page's head and sitemap."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from xml.etree import ElementTree

import compperf_docs
import compperf_project
import pytest
from compperf_docs import alternates, site

DOCS_EXT = Path(compperf_docs.__file__).resolve().parents[1]
ROOT_URL = "https://example.org/site/"

CONF = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(DOCS_EXT)!r})
from compperf_docs import gallery

DOCS = Path(__file__).resolve().parent
project = "tiny"
extensions = ["sphinx_gallery.gen_gallery", "sphinx_sitemap", "compperf_docs"]
exclude_patterns = ["_build"]
sphinx_gallery_conf = gallery.gallery_conf(DOCS, DOCS.parent, [])
sitemap_excludes = ["search.html", "genindex.html"]
"""

INDEX = "Tiny\n====\n\n.. toctree::\n\n   guide/page\n"
PAGE = "A page\n======\n\nText.\n"
LANGUAGE_TAGS = {language.tag for language in compperf_project.languages()}
XHTML = "{http://www.w3.org/1999/xhtml}link"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    docs = tmp_path_factory.mktemp("alternates") / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "conf.py").write_text(CONF, encoding="utf-8")
    (docs / "index.rst").write_text(INDEX, encoding="utf-8")
    (docs / "guide" / "page.rst").write_text(PAGE, encoding="utf-8")
    # The tiny site's own [tool.compperf]: the real languages (its gallery lists no chapter).
    project = compperf_project.load().replace(site_url=ROOT_URL)
    (docs.parent / "pyproject.toml").write_text(project.to_toml(), encoding="utf-8")
    html = docs / "_build" / "html"
    env = {**os.environ, site.SITE_URL_VARIABLE: ROOT_URL}
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-D", "language=en",
         str(docs), str(html / "en")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    # Not -W: the compperf wheel that `nox -s docs` builds is missing here, which warns.
    assert result.returncode == 0, result.stdout + result.stderr
    return SimpleNamespace(docs=docs, html=html, env=env, log=result.stderr)


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
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-D", "language=en",
         str(built.docs), str(built.html / "en")],
        capture_output=True, text=True, env=built.env, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sitemap" not in result.stderr
    assert sitemap.read_bytes() == before


def test_root_page_names_the_languages_it_sends_readers_to(built: SimpleNamespace) -> None:
    links = _head_links(built.html / "index.html")
    assert links == {"en": f"{ROOT_URL}en/index.html", "x-default": ROOT_URL}
