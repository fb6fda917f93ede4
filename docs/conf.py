"""Sphinx configuration for the compperf site: project, extensions, gallery, i18n, theme."""

from __future__ import annotations

import builtins
import importlib.metadata
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import compperf_project
from compperf_docs.execute import gallery

# Languages, chapters and the default site URL: [tool.compperf] in ../pyproject.toml.
PROJECT = compperf_project.load(DOCS.parent / "pyproject.toml")

# -- Project -----------------------------------------------------------------
project = "compperf"
author = "The compperf team"
copyright = "2026, the compperf team"
release = version = importlib.metadata.version("compperf")

# -- Extensions --------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_gallery.gen_gallery",
    "myst_nb",
    "sphinx_copybutton",
    "sphinx_sitemap",
    "sphinxext.opengraph",
    "notfound.extension",
    # The site's pipeline, in order (docs/_ext/compperf_docs/; when each hook runs: order.py).
    "compperf_docs.execute",  # English: execute the examples, record what they print and draw
    "compperf_docs.shards",  # which chapters execute; merged outputs reused, never run again
    "compperf_docs.languages",  # zh_CN, ru: redraw, replace, rewrite from the records
    "compperf_docs.publish",  # downloads, notebooks, Colab, the assembled site, sitemaps
    "compperf_docs.workarounds",  # the upstream output the site rewrites, warning when it slips
]
# The home page's "This edition" list, from the examples' records (docs/_ext/compperf_edition.py).
extensions.append("compperf_edition")
# Code that only another device runs, folded on this build (docs/_ext/compperf_folding.py).
extensions.append("compperf_folding")
# Each example's Answers folded under its title, opened with one click (compperf_answers.py).
extensions.append("compperf_answers")
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    # sphinx-gallery's notebooks are downloads, not sources: myst-nb would otherwise
    # read (and execute) them instead of the gallery's .rst. "**" also covers the top level.
    "auto_examples/**.ipynb",
]
nitpicky = True  # also `-n`: every cross-reference must resolve

# -- API reference (numpydoc-style docstrings via napoleon) ------------------
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc docstrings carry the types; no second copy
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True  # dataclass fields: listed once, not also as attribute entries
napoleon_preprocess_types = True  # "int, optional", "float, default 0.2"
# Offline build: no intersphinx inventories, so names from torch, numpy, matplotlib, the
# standard library and the builtins stay plain text instead of failing `-n`.
_EXTERNAL = ["torch", "numpy", "np", "matplotlib", "graphviz", *sorted(sys.stdlib_module_names)]
nitpick_ignore_regex = [
    ("py:.*", rf"({'|'.join(_EXTERNAL)})(\..*)?"),
    ("py:class", r"sequence|iterable|mapping|array-like"),  # numpydoc type words
]
nitpick_ignore = [
    (f"py:{role}", name) for name in dir(builtins) for role in ("func", "class", "exc", "obj")
]

# -- Gallery (one per chapter) -----------------------------------------------
# Notebooks' first cell installs compperf from compperf_site_url (compperf_docs.execute.gallery);
# their links to other pages go to the canonical site, so they do not depend on where
# this build will be served.
sphinx_gallery_conf = gallery.gallery_conf(
    DOCS,
    DOCS.parent / "examples",
    PROJECT.chapters,
    pages_url=f"{PROJECT.site_url}{PROJECT.codes[0]}/",
)
# Reading (issue 21): a 2x image beside each figure for sharp screens (the page links
# the full size, _static/compperf.js).
sphinx_gallery_conf["image_srcset"] = ["2x"]

# -- Executable MyST pages (myst-nb) -----------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
nb_execution_mode = "cache"  # off with `-D nb_execution_mode=off`
# An absolute path: myst-nb resolves it from the working directory, not from docs/.
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_raise_on_error = True
nb_execution_timeout = 600
nb_execution_excludepatterns = ["auto_examples/**"]
nb_merge_streams = True

# -- Internationalisation ----------------------------------------------------
# Other languages: `-D language=zh_CN` (see [tool.compperf.languages]), with one
# catalog per page in locales/<lang>/LC_MESSAGES/<page>.po and the UI strings (switcher,
# sphinx-gallery's and furo's labels) in locales/<lang>/LC_MESSAGES/sphinx.po.
# `nox -s translations` refreshes them; compperf_docs.languages.i18n stops a build whose catalogs
# are missing or unreadable.
language = "en"
locale_dirs = ["locales/"]
gettext_compact = False
gettext_uuid = False
gettext_last_translator = "The compperf team"
gettext_language_team = "The compperf team"
# Each language's search language (html_search_language) is its `search` entry: "zh"
# splits words with jieba (docs dependency group), "ru" stems with snowball.

# -- Site (URLs per language are derived in compperf_docs.publish.site.derive_urls) ---
# compperf_site_url: $COMPPERF_SITE_URL, else site-url in [tool.compperf]; a build can
# override it with `-D compperf_site_url=...` (links, sitemap and notebooks follow).
# Only pages a search engine should send readers to.
sitemap_excludes = ["search.html", "genindex.html", "404.html"]
ogp_enable_meta_description = True
ogp_social_cards = {"enable": False}  # cards need fonts from the network
# notfound_context (the 404 page's text) is set per language in compperf_docs.publish.site.
copybutton_exclude = ".linenos, .gp, .go"

# -- Theme -------------------------------------------------------------------
html_theme = "furo"
html_title = "compperf"
html_static_path = ["_static"]
html_css_files = ["compperf.css"]
html_js_files = [("compperf.js", {"defer": "defer"})]
templates_path = ["_templates"]
# furo's sidebar, plus the language switcher under the search box.
html_sidebars = {
    "**": [
        "sidebar/brand.html",
        "sidebar/search.html",
        "sidebar/languages.html",
        "sidebar/scroll-start.html",
        "sidebar/navigation.html",
        "sidebar/ethical-ads.html",
        "sidebar/scroll-end.html",
        "sidebar/variant-selector.html",
    ]
}
