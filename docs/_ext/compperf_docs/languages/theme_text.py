"""The theme's and Sphinx's fixed English interface, rendered again in the language being built.

furo 2025.12.19 writes some labels as literal English, outside any ``_()``: the sidebar and
theme toggles' ``aria-label``, its icons' ``<title>``, the footer's credit and the
navigation tree's "Toggle navigation of ..." switches. Sphinx's search script reads its
messages from Sphinx's own catalogs, where Russian has no text for the result count. These
helpers replace each with a message of the site's UI catalog (``sphinx.po``); each warns by
name (:func:`compperf_docs.workarounds.slipped`) when the English it expects is gone.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import sphinx
from sphinx.locale import _

from compperf_docs import workarounds

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = [
    "SCRIPT",
    "add_page_text",
    "add_search_messages",
    "check_search_messages",
    "page_text",
    "translate_copyright",
    "translate_navigation",
    "write_search_messages",
]

# Sphinx's catalog also translates messages that Sphinx itself asks for: ours come first.
_SPHINX_MESSAGES = (
    _("Keyword-only parameters separator (PEP 3102)"),
    _("Positional-only parameter separator (PEP 570)"),
)

# Written beside Sphinx's translations.js and loaded after it (see add_search_messages).
SCRIPT = "compperf-translations.js"
# The count-neutral message stands for every plural form of Sphinx's result count.
_PLURAL_FORMS = 6
_SEARCH_SCRIPTS = ("searchtools.js", "sphinx_highlight.js")
_RESULT_COUNT_KEY = "Search finished, found one page matching the search query."


def _search_messages() -> dict[str, str | list[str]]:
    """Sphinx's message in its search scripts -> its translation from the UI catalog."""
    count = _("Search finished, found ${resultCount} pages matching the search query.")
    return {
        "Preparing search...": _("Preparing search..."),
        "Searching": _("Searching"),
        "Search Results": _("Search Results"),
        _RESULT_COUNT_KEY: [count] * _PLURAL_FORMS,
        "Your search did not match any documents. Please make sure that all words are "
        "spelled correctly and that you've selected enough categories.": _(
            "Your search did not match any documents. Please make sure that all words are "
            "spelled correctly and that you've selected enough categories."
        ),
        ", in ": _(", in "),
        "Hide Search Matches": _("Hide Search Matches"),
    }


def _labels() -> dict[str, str]:
    """furo's literal English (attribute or element) -> the same in the page's language."""
    attributes = {
        "Toggle site navigation sidebar": _("Toggle site navigation sidebar"),
        "Toggle table of contents sidebar": _("Toggle table of contents sidebar"),
        "Toggle Light / Dark / Auto color theme": _("Toggle Light / Dark / Auto color theme"),
    }
    icons = {
        "Contents": _("Contents"),
        "Menu": _("Menu"),
        "Expand": _("Expand"),
        "Light mode": _("Light mode"),
        "Dark mode": _("Dark mode"),
        "Auto light/dark, in light mode": _("Auto light/dark, in light mode"),
        "Auto light/dark, in dark mode": _("Auto light/dark, in dark mode"),
    }
    return {
        **{
            f'aria-label="{english}"': f'aria-label="{html.escape(str(text))}"'
            for english, text in attributes.items()
        },
        **{
            f"<title>{english}</title>": f"<title>{html.escape(str(text))}</title>"
            for english, text in icons.items()
        },
    }


# furo's footer: "Made with", the Sphinx link, "and", the author's link, "'s", the Furo
# link, each a separate (translated) piece, in English word order. Replaced as a whole.
_SPHINX_LINK = '<a href="https://www.sphinx-doc.org/">Sphinx</a>'
_AUTHOR_LINK = '<a class="muted-link" href="https://pradyunsg.me">@pradyunsg</a>'
_FURO_LINK = '<a href="https://github.com/pradyunsg/furo">Furo</a>'
_CREDIT = re.compile(
    r"(?<=>)[^<>]*"
    + re.escape(_SPHINX_LINK)
    + r"[^<>]*"
    + re.escape(_AUTHOR_LINK)
    + r"'s\s*"
    + re.escape(_FURO_LINK)
    + r"[^<>]*(?=<)"
)
_TOGGLE_NAVIGATION = re.compile(r'aria-label="Toggle navigation of ([^"]*)"')


def _credit() -> str:
    text = _("Made with {sphinx} and {author}'s {furo}")
    return "\n" + text.format(sphinx=_SPHINX_LINK, author=_AUTHOR_LINK, furo=_FURO_LINK) + "\n"


def page_text(rendered: str, pagename: str = "") -> str:
    """furo's rendered ``page.html`` body with its literal English in the page's language.

    Called from ``_templates/page.html`` through the context (see :func:`add_page_text`).
    """
    for english, text in _labels().items():
        if english not in rendered:
            workarounds.slipped("theme-labels", f"furo no longer writes {english!r}", pagename)
        rendered = rendered.replace(english, text)
    rendered, found = _CREDIT.subn(lambda _match: _credit(), rendered)
    if found != 1:
        workarounds.slipped(
            "theme-labels", "furo's footer credit is no longer Sphinx, @pradyunsg's Furo", pagename
        )
    return rendered


def add_page_text(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Give ``_templates/page.html`` the function that translates furo's literal English."""
    if app.builder.format == "html" and app.config.language != "en":
        context["compperf_page_text"] = lambda rendered: page_text(rendered, pagename)


def translate_navigation(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """The navigation tree's section switches, labelled in the page's language."""
    tree = context.get("furo_navigation_tree")
    if app.config.language == "en" or not isinstance(tree, str):
        return

    def label(match: re.Match[str]) -> str:
        # The section's title is already escaped in the attribute.
        text = html.escape(_("Toggle navigation of {section}"), quote=True)
        return f'aria-label="{text.format(section=match.group(1))}"'

    switches = tree.count('class="toctree-checkbox"')
    tree, labelled = _TOGGLE_NAVIGATION.subn(label, tree)
    if labelled != switches:
        workarounds.slipped(
            "theme-labels",
            f"{switches} section switch(es) in furo's navigation tree, {labelled} labelled "
            "'Toggle navigation of ...'",
            pagename,
        )
    context["furo_navigation_tree"] = tree


def translate_copyright(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """``copyright`` from conf.py, in the page's language (compperf_docs.languages.i18n extracts it)."""
    if app.config.language != "en" and context.get("copyright"):
        context["copyright"] = _(context["copyright"])


def check_search_messages(static: Path | None = None) -> None:
    """Warn when Sphinx's search scripts in ``static`` no longer ask for a message we replace."""
    static = static or Path(sphinx.__file__).parent / "themes" / "basic" / "static"
    scripts = "".join(
        (static / name).read_text(encoding="utf-8")
        for name in _SEARCH_SCRIPTS
        if (static / name).is_file()
    )
    gone = [key for key in _search_messages() if json.dumps(key) not in scripts]
    if gone:
        workarounds.slipped("search-messages", f"Sphinx's search scripts no longer ask for {gone}")


def add_search_messages(app: Sphinx) -> None:
    """Load :data:`SCRIPT` after Sphinx's translations.js on every page of a translated build."""
    if app.builder.format != "html" or app.config.language == "en":
        return
    check_search_messages()
    app.add_js_file(SCRIPT, priority=800)  # translations.js has the default, 500


def write_search_messages(app: Sphinx, exception: Exception | None) -> None:
    """Write :data:`SCRIPT`: the search messages from the UI catalog, over Sphinx's own."""
    if exception is not None or app.builder.format != "html" or app.config.language == "en":
        return
    messages = {
        key: [str(v) for v in value] if isinstance(value, list) else str(value)
        for key, value in _search_messages().items()
    }
    path = Path(app.outdir, "_static", SCRIPT)
    path.write_text(
        "// Sphinx's search messages from the site's UI catalog (compperf_docs.theme_text).\n"
        f"Object.assign(Documentation.TRANSLATIONS, {json.dumps(messages, ensure_ascii=False)});\n",
        encoding="utf-8",
    )
