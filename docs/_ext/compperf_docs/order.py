"""When each stage's hooks run relative to the others and to the extensions they depend on.

Sphinx runs the handlers of one event by priority, lowest first, and handlers of equal
priority in the order they were connected. Every hook of the site's stages whose moment
matters has its priority here, named, with the reason; the stages' ``setup()`` functions
and transforms use these names and no number of their own.

A hook that is not named here runs at Sphinx's default, 500, after the same event's
default-priority handlers of the third-party extensions (``docs/conf.py`` loads those
first) and in the order of the stages in ``extensions``. None of those depends on another:
each adds its own value to a page's context or writes its own file.

The third-party moments these are placed around (sphinx-gallery 0.22, myst-nb, furo,
sphinx-sitemap, docutils): sphinx-gallery fills its configuration's defaults at
``config-inited`` 10 and writes the gallery's pages, notebooks, downloads and md5 stamps
at ``builder-inited`` 500; myst-nb sets up its configuration at ``builder-inited`` 500;
furo renders its navigation tree at ``html-page-context`` 500; sphinx-sitemap writes
``sitemap.xml`` at ``build-finished`` 500; docutils' and Sphinx's ``Locale`` transform
translates the paragraphs at transform priority 20.
"""

from __future__ import annotations

# -- config-inited --------------------------------------------------------------
# Before sphinx-gallery reads its configuration (10): the notebooks' install cell names the
# site's address (execute.gallery.use_site_url) ...
GALLERY_SITE_URL = 5
# ... and its reset hooks include the one that keeps each example's figures
# (publish.published.add_hook).
GALLERY_RESET_HOOK = 6
# After sphinx-gallery filled its defaults (10): which chapters execute (shards).
CHAPTERS = 20
# Early, so that sphinx-sitemap, opengraph and notfound see the derived per-language URLs
# (publish.site.derive_urls) ...
SITE_URLS = 100
# ... and after them, the languages the sitemap lists (publish.alternates).
SITEMAP_LANGUAGES = 200

# -- builder-inited -------------------------------------------------------------
# Before sphinx-gallery generates its pages (500), the outputs it must make again are
# forgotten (their md5 stamps deleted): another notebook conversion (execute.gallery) ...
FORGET_OTHER_CONVERSION = 400
# ... lost records of the messages or pickled figures the other languages are drawn from
# (execute.gallery; English only) ...
FORGET_WITHOUT_RECORDS = 410
# ... and lost figures of the published numbers (publish.published; English only).
FORGET_WITHOUT_FIGURES = 411
# After the outputs were forgotten, before sphinx-gallery runs: a build that reuses merged
# outputs stops if some are missing, and records the notebooks' cache (shards).
REQUIRE_OUTPUTS = 450
# After sphinx-gallery has written the notebooks (500): no reST may reach a reader there
# (publish.notebook_check) ...
CHECK_NOTEBOOKS = 600
# ... the .py downloads and zips lose the lines the page hides (publish.downloads) ...
STRIP_HIDDEN_LINES = 610
# ... the published numbers go into the stripped downloads (publish.published) ...
EMBED_PUBLISHED = 615
# ... each other language's .py, .ipynb and zips are made from those copies
# (languages.language_downloads) ...
LANGUAGE_DOWNLOADS = 620
# ... and the Colab copies from the finished notebooks (publish.published).
COLAB_COPIES = 625
# After sphinx-gallery has written its pages, before Sphinx picks what to read: figures and
# printed messages in the page's language (languages.figures.draw_languages).
DRAW_LANGUAGES = 700
# After myst-nb has set up its configuration (500): where executed notebooks' outputs go
# (publish.site.move_notebook_outputs).
MOVE_NOTEBOOK_OUTPUTS = 900

# -- html-page-context ----------------------------------------------------------
# Before sphinxext-opengraph's handler (500), which reads the page's description
# (publish.descriptions).
PAGE_DESCRIPTION = 400
# After furo has rendered the navigation tree (500): its captions get their labels
# (workarounds.label_toctree_captions) ...
NAVIGATION_LABELS = 900
# ... and then the tree's English, those labels included, is translated
# (languages.theme_text.translate_navigation).
NAVIGATION_TEXT = 901

# -- build-finished -------------------------------------------------------------
# Before sphinx-sitemap writes the sitemap (500): the pages not written this time join its
# queue (publish.alternates.complete_sitemap) ...
COMPLETE_SITEMAP = 400
# ... and after it, each entry gets its hreflang alternates (publish.alternates).
SITEMAP_DEFAULTS = 600

# -- Transforms (``default_priority``; docutils runs lower first) ---------------
# Post-transform, before the references are resolved: a pending_xref names the page
# (languages.gallery_text.GalleryThumbnails).
GALLERY_THUMBNAILS = 5
# Before Locale (20), so that it never looks sphinx-gallery's furniture up in the page
# catalogs (languages.gallery_text.GalleryFurniture) ...
GALLERY_FURNITURE = 15
# ... and after it rewrote the running time, the line about the run (execute.disturbed).
RUN_LINE = 16
# After Locale (20): the translated page gets its figures (the gallery's image nodes,
# languages.figures.FigureLanguage) and its printed messages (the output's literal blocks,
# languages.printed.PrintedLanguage) in its language; they touch different nodes, so
# which of the two runs first does not matter ...
FIGURE_LANGUAGE = 800
PRINTED_LANGUAGE = 800
# ... and its download links point at the language's files
# (languages.language_downloads.LanguageDownloads).
LANGUAGE_DOWNLOAD_LINKS = 870
