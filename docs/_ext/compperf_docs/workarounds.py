"""Fixes for known gaps in Sphinx 9.0 and Pygments' markup that the site would otherwise show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinx.search.zh import SearchChinese

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["ChineseSearch", "focusable_code_blocks", "label_toctree_captions"]

# Sphinx 9 writes toctree captions as role="heading" without the aria-level that ARIA 1.2
# requires (sphinx-doc/sphinx#14030; axe-core reports it as critical); level 2 is what
# ARIA 1.1 implied.
_CAPTION = '<p class="caption" role="heading">'
_LABELLED = '<p class="caption" role="heading" aria-level="2">'
# Pygments' code and output blocks scroll sideways when a line is long; a scrollable
# region must be reachable by keyboard (WCAG 2.1.1, axe "scrollable-region-focusable").
_PRE = '<div class="highlight"><pre>'
_FOCUSABLE_PRE = '<div class="highlight"><pre tabindex="0">'


class ChineseSearch(SearchChinese):
    """Chinese search whose page script names the stemmer Sphinx actually ships.

    Sphinx 9.0.4 bundles ``english-stemmer.js`` for Chinese pages (it stems the Latin
    words) but assigns ``window.Stemmer = ChineseStemmer``, which does not exist, so the
    search page finds nothing (sphinx-doc/sphinx#14229, fixed after 9.0.4).
    """

    language_name = "English"


def label_toctree_captions(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Give toctree captions in the page and furo's sidebar their heading level."""
    for key in ("body", "furo_navigation_tree"):
        if isinstance(context.get(key), str):
            context[key] = context[key].replace(_CAPTION, _LABELLED)


def focusable_code_blocks(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Let keyboard users focus (and so scroll) every code and output block."""
    if isinstance(context.get("body"), str):
        context["body"] = context["body"].replace(_PRE, _FOCUSABLE_PRE)
