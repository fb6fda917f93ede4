"""Stage 4, every language: downloads, notebooks, Colab, the assembled site and its sitemaps.

- :mod:`notebook_markdown` (with ``compperf_docs/pandoc/``): the notebooks' Markdown, converted by the
  pandoc the project pins; :mod:`notebook_check` then checks that no reST reached them.
- :mod:`downloads`: the ``.py`` downloads and zips without the lines the page hides.
- :mod:`published`, :mod:`colab`, :mod:`results`: for learners, the published numbers in
  each download, the Colab copies and button, the Results pages (one column per machine).
- :mod:`site`: the per-language URLs, the language switcher, the root ``index.html`` and
  sitemap index, pages whose sources were removed; :mod:`alternates`: hreflang links in
  each page's head and in the sitemap; :mod:`descriptions`: each page's description (meta
  and og:) from its prose; :mod:`install`: the ``compperf-install`` directive;
  :mod:`navigation`: every page written again when the site's navigation changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compperf_docs import order

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["setup"]


def setup(app: Sphinx) -> dict[str, object]:
    # Imported here, not above: a module of this stage may import another stage's.
    from compperf_docs.publish import (
        alternates,
        colab,
        descriptions,
        downloads,
        install,
        navigation,
        notebook_check,
        published,
        results,
        site,
    )

    # $COMPPERF_SITE_URL, else site-url in [tool.compperf]; `-D compperf_site_url=` wins.
    app.add_config_value("compperf_site_url", site.site_url(app.srcdir), "html", types=(str,))
    app.connect("config-inited", site.derive_urls, priority=order.SITE_URLS)
    app.connect("builder-inited", site.move_notebook_outputs, priority=order.MOVE_NOTEBOOK_OUTPUTS)
    app.connect(
        "builder-inited", notebook_check.check_gallery_notebooks, priority=order.CHECK_NOTEBOOKS
    )
    app.connect("builder-inited", downloads.strip_hidden_lines, priority=order.STRIP_HIDDEN_LINES)
    app.connect("env-get-outdated", site.forget_removed_pages)
    app.connect("env-get-updated", navigation.write_every_page_when_it_changes)
    app.add_directive("compperf-install", install.InstallCommand)
    app.connect("build-finished", site.write_root_files)
    app.connect("html-page-context", site.add_language_links)
    # Search engines: hreflang alternates in each page's head and in the sitemap.
    app.connect(
        "config-inited", alternates.list_sitemap_languages, priority=order.SITEMAP_LANGUAGES
    )
    app.connect("html-page-context", alternates.add_head_links)
    app.connect("html-page-context", alternates.remember_written_page)
    app.connect("build-finished", alternates.complete_sitemap, priority=order.COMPLETE_SITEMAP)
    app.connect("build-finished", alternates.add_sitemap_defaults, priority=order.SITEMAP_DEFAULTS)
    # Each page's description from its prose, in its language (meta and og:).
    descriptions.setup(app)
    # Learners (issue 26): Open in Colab, the published numbers in each download, and the
    # Results pages with one column per machine.
    colab.setup(app)
    published.setup(app)
    results.setup(app)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
