"""Stage 3, zh_CN and ru: the other languages, made from the English build's records.

Nothing executes here. Each language's build takes the English outputs in
``docs/auto_examples/`` and replaces what the reader reads:

- :mod:`i18n`: the catalogs are checked before anything is read (every language), the
  site's UI messages are added, a page without its catalog stops the build.
- :mod:`figures`: each pickled figure is drawn again with its texts in the language
  (:func:`figures.draw_languages`), and the page shows that drawing
  (:class:`figures.FigureLanguage`).
- :mod:`printed`: each recorded message the example printed is replaced by its
  translation (:class:`printed.PrintedLanguage`).
- :mod:`language_downloads` (with :mod:`download_text`, :mod:`rst_text`,
  :mod:`code_comments`, :mod:`language_notebooks`): the language's own ``.py``,
  ``.ipynb`` and zips, rewritten from the English downloads, and the page's links to them.
- :mod:`gallery_text`, :mod:`theme_text`: the literal English of sphinx-gallery, furo and
  Sphinx (running times, thumbnails, navigation, search messages, copyright).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compperf_docs import order

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["setup"]


def setup(app: Sphinx) -> dict[str, object]:
    # Imported here, not above: a module of this stage may import another stage's.
    from compperf_docs.languages import (
        figures,
        gallery_text,
        i18n,
        language_downloads,
        printed,
        theme_text,
    )

    # The code comments' catalogs are compperf's own unless a build names another folder
    # (tests do).
    app.add_config_value("compperf_comment_catalogs", "", "env", types=(str,))
    app.connect(
        "builder-inited",
        language_downloads.write_language_downloads,
        priority=order.LANGUAGE_DOWNLOADS,
    )
    app.add_transform(language_downloads.LanguageDownloads)
    # Catalogs checked before anything is read; UI strings and the pages sphinx-gallery
    # rewrites with timings handled apart from the page catalogs.
    app.connect("builder-inited", i18n.check_catalogs)
    app.connect("builder-inited", i18n.require_word_splitter)
    app.connect("builder-inited", i18n.add_ui_messages)
    app.connect("env-before-read-docs", i18n.require_page_catalogs)
    # Printed messages and figures in the page's language, from what the English build
    # recorded.
    app.connect("builder-inited", figures.draw_languages, priority=order.DRAW_LANGUAGES)
    app.add_transform(figures.FigureLanguage)
    app.add_transform(printed.PrintedLanguage)
    # The theme's and Sphinx's literal English (see theme_text.py), sphinx-gallery's.
    app.connect("html-page-context", theme_text.add_page_text)
    app.connect("html-page-context", theme_text.translate_copyright)
    app.connect("builder-inited", theme_text.add_search_messages)
    app.connect("build-finished", theme_text.write_search_messages)
    app.add_transform(gallery_text.GalleryFurniture)
    app.add_post_transform(gallery_text.GalleryThumbnails)
    app.connect(
        "html-page-context", theme_text.translate_navigation, priority=order.NAVIGATION_TEXT
    )
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
