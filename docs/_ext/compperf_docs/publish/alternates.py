"""Tell search engines about each page's other languages: hreflang in heads and sitemaps.

Every indexed page names all its language versions, itself included, plus an
``x-default``: the root address (which picks the reader's language) for the home page,
the first language's page for the others. Each language's sitemap carries the same set
as ``xhtml:link`` alternates, so the two never disagree.
"""

from __future__ import annotations

import fnmatch
import html
import queue
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree

from sphinx.util import logging

from compperf_docs.publish import site

if TYPE_CHECKING:
    from collections.abc import Sequence

    from compperf_project import Language
    from sphinx.application import Sphinx
    from sphinx.config import Config

__all__ = [
    "X_DEFAULT",
    "add_head_links",
    "add_sitemap_defaults",
    "alternate_urls",
    "complete_sitemap",
    "list_sitemap_languages",
    "remember_written_page",
]

logger = logging.getLogger(__name__)

X_DEFAULT = "x-default"
_HOME = "index.html"
_SITEMAP = "http://www.sitemaps.org/schemas/sitemap/0.9"
_XHTML = "http://www.w3.org/1999/xhtml"


def alternate_urls(root_url: str, link: str, languages: Sequence[Language]) -> dict[str, str]:
    """hreflang tag -> absolute URL of the page ``link`` (e.g. ``api.html``) per language.

    Parameters
    ----------
    root_url : str
        The deployable root's URL, ending in ``/`` (``compperf_site_url``).
    link : str
        The page's path inside a language folder, as the HTML builder writes it.
    languages : sequence of compperf_project.Language
        The site's languages (``[tool.compperf]``), the default (``x-default``) one first.
    """
    urls = {lang.tag: f"{root_url}{lang.code}/{link}" for lang in languages}
    urls[X_DEFAULT] = root_url if link == _HOME else f"{root_url}{languages[0].code}/{link}"
    return urls


def _indexed(app: Sphinx, pagename: str, link: str) -> bool:
    """Pages search engines should list: those in the sitemap (not search, 404, ...)."""
    if pagename == getattr(app.config, "notfound_pagename", "404"):
        return False
    excludes = getattr(app.config, "sitemap_excludes", [])
    return not any(fnmatch.fnmatch(link, pattern) for pattern in excludes)


def list_sitemap_languages(app: Sphinx, config: Config) -> None:
    """Make sphinx-sitemap list every language, this one included.

    Left to itself it lists the folders of ``locale_dirs`` (zh_CN, ru), which leaves out
    English and, in the English sitemap, the page itself.
    """
    if "sitemap_locales" in config:  # sphinx-sitemap is loaded
        config.sitemap_locales = [lang.code for lang in site.project(app).languages]


def add_head_links(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Add ``<link rel="alternate" hreflang=...>`` for every language to the page's head."""
    if app.builder.format != "html":
        return
    link = app.builder.get_target_uri(pagename)
    if not _indexed(app, pagename, link):
        return
    urls = alternate_urls(app.config.compperf_site_url, link, site.project(app).languages)
    tags = "".join(
        f'\n<link rel="alternate" hreflang="{tag}" href="{html.escape(url)}" />'
        for tag, url in urls.items()
    )
    context["metatags"] = context.get("metatags", "") + tags


def add_sitemap_defaults(app: Sphinx, exception: Exception | None) -> None:
    """Add the ``x-default`` alternate to every URL of the sitemap sphinx-sitemap wrote.

    sphinx-sitemap (2.9) writes one ``xhtml:link`` per listed language and has no
    setting for ``x-default``. If its output no longer looks as expected, this warns
    and leaves the file alone.
    """
    if exception is not None or app.builder.format != "html":
        return
    path = Path(app.outdir) / getattr(app.config, "sitemap_filename", "sitemap.xml")
    if not path.is_file():
        return
    ElementTree.register_namespace("", _SITEMAP)
    ElementTree.register_namespace("xhtml", _XHTML)
    tree = ElementTree.parse(path)
    prefix = f"{app.config.compperf_site_url}{app.config.language}/"
    languages = site.project(app).languages
    added = False
    for url in tree.getroot().iter(f"{{{_SITEMAP}}}url"):
        loc = url.findtext(f"{{{_SITEMAP}}}loc") or ""
        links = url.findall(f"{{{_XHTML}}}link")
        if any(link.get("hreflang") == X_DEFAULT for link in links):
            continue  # sphinx-sitemap wrote no new file: a build that wrote no page
        if not loc.startswith(prefix) or len(links) != len(languages):
            logger.warning(
                "compperf: %s does not look as sphinx-sitemap 2.9 writes it (%s); no "
                "x-default added",
                path,
                loc,
                type="compperf",
                subtype="sitemap",
            )
            return
        href = alternate_urls(app.config.compperf_site_url, loc[len(prefix) :], languages)
        ElementTree.SubElement(
            url, f"{{{_XHTML}}}link", rel="alternate", hreflang=X_DEFAULT, href=href[X_DEFAULT]
        )
        added = True
    if added:
        tree.write(path, xml_declaration=True, encoding="utf-8", method="xml")


# Pages written by the build of each output folder (html-page-context), for the sitemap.
_WRITTEN: dict[str, set[str]] = {}


def remember_written_page(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Note each page this build writes (:func:`complete_sitemap` needs the others)."""
    _WRITTEN.setdefault(str(app.outdir), set()).add(pagename)


def complete_sitemap(app: Sphinx, exception: Exception | None) -> None:
    """Make sphinx-sitemap list every page, not only those this build wrote.

    sphinx-sitemap (2.9) lists the pages written in this build: an incremental build that
    writes some pages would leave the unchanged ones out. Before it writes the sitemap
    (build-finished, priority 500) the pages not written this time join its queue, and
    the queue is put in the order of a clean build (documents by name, then the pages
    Sphinx writes after them), so the sitemap lists what a clean build lists. A build
    that wrote no page leaves the last sitemap as it is (sphinx-sitemap does).
    """
    written = _WRITTEN.pop(str(app.outdir), set())
    links = getattr(app, "sitemap_links", None)  # sphinx-sitemap sets it on env.app, the app
    if exception is not None or app.builder.format != "html" or links is None or not written:
        return
    from sphinx_sitemap import is_excluded

    queued = []
    while True:
        try:
            queued.append(links.get_nowait())
        except queue.Empty:
            break
    suffix = app.config.html_file_suffix or ".html"
    documents = {f"{docname}{suffix}": docname for docname in app.env.found_docs}
    have = {link for link, _ in queued}
    excludes = app.config.sitemap_excludes
    queued += [
        (link, None) for link in documents if link not in have and not is_excluded(link, excludes)
    ]
    ordered = sorted(
        (entry for entry in queued if entry[0] in documents), key=lambda e: documents[e[0]]
    )
    for entry in [*ordered, *(entry for entry in queued if entry[0] not in documents)]:
        links.put(entry)
