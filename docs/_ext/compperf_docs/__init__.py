"""Sphinx extension for the compperf site: languages, URLs, provenance checks, root page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compperf_docs import (
    alternates,
    colab,
    descriptions,
    disturbed,
    downloads,
    figures,
    gallery,
    gallery_text,
    i18n,
    install,
    language_downloads,
    notebook_check,
    printed,
    provenance,
    published,
    results,
    shards,
    site,
    theme_text,
    workarounds,
)

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["setup"]


def setup(app: Sphinx) -> dict[str, object]:
    # $COMPPERF_SITE_URL, else site-url in [tool.compperf]; `-D compperf_site_url=` wins.
    app.add_config_value("compperf_site_url", site.site_url(app.srcdir), "html", types=(str,))
    # Before sphinx-gallery reads its configuration (config-inited, priority 10).
    app.connect("config-inited", gallery.use_site_url, priority=5)
    # Early, so that sitemap, opengraph and notfound see the derived values.
    app.connect("config-inited", site.derive_urls, priority=100)
    # Late, after myst-nb has set up its own configuration.
    app.connect("builder-inited", site.move_notebook_outputs, priority=900)
    # Before sphinx-gallery generates its pages (builder-inited, priority 500).
    app.connect("builder-inited", gallery.forget_outputs_made_with_another_conversion, priority=400)
    # ... and run again the examples whose outputs lack the recorded messages or a pickled
    # figure that the other languages are drawn from (English only: they execute nothing).
    app.connect("builder-inited", gallery.forget_outputs_without_records, priority=410)
    # After sphinx-gallery has written the notebooks: no reST may reach a reader there.
    app.connect("builder-inited", notebook_check.check_gallery_notebooks, priority=600)
    # ... and the .py downloads and zips: without the lines the page hides.
    app.connect("builder-inited", downloads.strip_hidden_lines, priority=610)
    # Other languages: their own .py, .ipynb and zips, made from the stripped copies, and
    # the page's download links and code comments in that language. The comments'
    # catalogs are compperf's own unless a build names another folder (tests do).
    app.add_config_value("compperf_comment_catalogs", "", "env", types=(str,))
    app.connect("builder-inited", language_downloads.write_language_downloads, priority=620)
    app.add_transform(language_downloads.LanguageDownloads)
    # Sharded builds (see shards.py): which chapters execute, and a build that reuses
    # merged outputs. After sphinx-gallery fills its defaults (config-inited, priority 10).
    app.add_config_value("compperf_chapters", "", "", types=(str, list))
    app.add_config_value("compperf_reuse_outputs", False, "", types=(bool,))
    app.connect("config-inited", shards.restrict_execution, priority=20)
    app.connect("builder-inited", shards.require_outputs, priority=450)
    app.connect("builder-inited", shards.record_notebook_cache, priority=450)
    app.connect("env-updated", shards.check_outputs_reused)
    app.connect("env-get-outdated", site.forget_removed_pages)
    app.connect("source-read", provenance.check_example_page)
    app.add_directive("compperf-install", install.InstallCommand)
    app.connect("build-finished", site.write_root_files)
    # Languages: catalogs checked before anything is read; UI strings and the pages
    # sphinx-gallery rewrites with timings handled apart from the page catalogs.
    app.connect("builder-inited", i18n.check_catalogs)
    app.connect("builder-inited", i18n.require_word_splitter)
    app.connect("builder-inited", i18n.add_ui_messages)
    app.connect("env-before-read-docs", i18n.require_page_catalogs)
    # Printed messages and figures in the page's language, from what the English build
    # recorded; after sphinx-gallery has written its pages, before Sphinx picks what to read.
    app.connect("builder-inited", figures.draw_languages, priority=700)
    app.add_transform(figures.FigureLanguage)
    app.add_transform(printed.PrintedLanguage)
    # How disturbed each example's run was (<stem>.verdicts.json): a line after its running
    # time, the about page's table (compperf-runs), the log's list at the end.
    disturbed.setup(app)
    app.connect("html-page-context", site.add_language_links)
    # Search engines: hreflang alternates in each page's head and in the sitemap,
    # after sphinx-sitemap writes it (build-finished, priority 500).
    app.connect("config-inited", alternates.list_sitemap_languages, priority=200)
    app.connect("html-page-context", alternates.add_head_links)
    # Before sphinx-sitemap writes the sitemap (build-finished, priority 500).
    app.connect("html-page-context", alternates.remember_written_page)
    app.connect("build-finished", alternates.complete_sitemap, priority=400)
    app.connect("build-finished", alternates.add_sitemap_defaults, priority=600)
    # The theme's and Sphinx's literal English (see theme_text.py).
    app.connect("html-page-context", theme_text.add_page_text)
    app.connect("html-page-context", theme_text.translate_copyright)
    app.connect("builder-inited", theme_text.add_search_messages)
    app.connect("build-finished", theme_text.write_search_messages)
    app.add_transform(gallery_text.GalleryFurniture)
    app.add_post_transform(gallery_text.GalleryThumbnails)
    # Upstream bugs and internals (see workarounds.py); each warns by name when it slips.
    app.connect("builder-inited", workarounds.announce_removable)
    app.add_search_language(workarounds.ChineseSearch)
    app.connect("builder-inited", workarounds.check_chinese_search)
    # furo renders its navigation tree at priority 500.
    app.connect("html-page-context", workarounds.label_toctree_captions, priority=900)
    app.connect("html-page-context", theme_text.translate_navigation, priority=900)
    app.connect("html-page-context", workarounds.focusable_code_blocks)
    # Each page's description from its prose, in its language (before sphinxext-opengraph).
    descriptions.setup(app)
    # Learners (issue 26): Open in Colab, the published numbers in each download, and
    # the Results pages with one column per machine (colab.py, published.py, results.py).
    colab.setup(app)
    published.setup(app)
    results.setup(app)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
