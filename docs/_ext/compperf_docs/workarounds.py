"""Where the site leans on other projects' output or internals, and says so when it slips.

Each lean is a :class:`Workaround` in :data:`WORKAROUNDS`: what it patches, in which
package, and the upstream release that makes it removable. When the patched markup or
object is no longer what the workaround expects, :func:`slipped` warns by name (an error
under ``-W``) instead of leaving a page silently English or broken; when the release that
makes it removable is installed, :func:`announce_removable` says so at the start of the
build.

Why one module of about 360 lines: every lean on another project is here on purpose, one
list (:data:`WORKAROUNDS`) and the patches it names, to be reviewed together at each
upstream release; spread over the stages they serve they would be found one at a time.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version
from sphinx.search.zh import SearchChinese
from sphinx.util import logging

from compperf_docs import order

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = [
    "WORKAROUNDS",
    "ChineseSearch",
    "Workaround",
    "announce_removable",
    "check_chinese_search",
    "focusable_code_blocks",
    "label_toctree_captions",
    "rewrite_first_notebook_cell",
    "rewrite_zip_member",
    "setup",
    "slipped",
]

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Workaround:
    """One place where the site rewrites or reaches into another project's output.

    Attributes
    ----------
    name : str
        Used in warnings (``compperf workaround 'name'``).
    package : str
        The distribution whose output or internals it depends on.
    removable_from : str or None
        The first release of ``package`` expected to make it unnecessary: from this
        release on, every build says to check it and remove it. ``None`` while no release
        is expected to (the reason says what upstream would need).
    reason : str
        What it does and why, with the upstream issue.
    """

    name: str
    package: str
    removable_from: str | None
    reason: str


WORKAROUNDS = {
    w.name: w
    for w in (
        Workaround(
            "chinese-search",
            "sphinx",
            "9.0.5",
            "Sphinx 9.0.4 bundles english-stemmer.js for Chinese pages but assigns "
            "window.Stemmer = ChineseStemmer, so search finds nothing (sphinx-doc/sphinx#14229, "
            "fixed after 9.0.4): ChineseSearch names the English stemmer.",
        ),
        Workaround(
            "toctree-caption-level",
            "sphinx",
            "9.0.5",
            'Sphinx 9.0.4 writes toctree captions as role="heading" without aria-level, '
            "which ARIA 1.2 requires (sphinx-doc/sphinx#14030, open at 9.0.4; axe-core: "
            'critical): label_toctree_captions adds aria-level="2".',
        ),
        Workaround(
            "focusable-code-blocks",
            "pygments",
            None,
            "Code and output blocks scroll sideways, and a scrollable region must be "
            "reachable by keyboard (WCAG 2.1.1); no Pygments or Sphinx release adds "
            'tabindex="0": focusable_code_blocks does.',
        ),
        Workaround(
            "gallery-thumbnails",
            "sphinx-gallery",
            None,
            "sphinx-gallery writes thumbnail titles and tooltips as raw English HTML that "
            "no catalog reaches (no release translates them): "
            "gallery_text.GalleryThumbnails rewrites them per language.",
        ),
        Workaround(
            "theme-labels",
            "furo",
            None,
            "furo 2025.12.19 writes the sidebar and theme toggles' aria-labels, its icons' "
            "titles, the footer credit and the navigation tree's 'Toggle navigation of' "
            "switches as literal English outside any _() (no release translates them): "
            "theme_text.page_text (via _templates/page.html) and "
            "theme_text.translate_navigation replace them per language.",
        ),
        Workaround(
            "search-messages",
            "sphinx",
            None,
            "Sphinx 9.0.4's search scripts take their messages from Sphinx's own catalogs, "
            "whose Russian leaves the result count empty: theme_text.write_search_messages "
            "loads the site's translations of them after translations.js.",
        ),
        Workaround(
            "figure-language",
            "sphinx-gallery",
            None,
            "sphinx-gallery shows figures with its own image-sg node, which Sphinx's "
            "figure_language_filename does not reach (no release localizes figures): "
            "figures.FigureLanguage points its uri, srcset and alt at the figure drawn "
            "in the page's language.",
        ),
        Workaround(
            "notebook-first-cell",
            "sphinx-gallery",
            None,
            "sphinx-gallery writes an example's notebook and zip only when it executes "
            "the example (its md5 stamps), so a new compperf_site_url would publish "
            "notebooks installing from the old address; no release rewrites downloads "
            "without executing: rewrite_first_notebook_cell updates them in place.",
        ),
        Workaround(
            "hidden-lines-in-downloads",
            "sphinx-gallery",
            None,
            "sphinx-gallery 0.22 hides sphinx_gallery_start_ignore blocks from the page and "
            "the notebook but publishes the .py download and the zips with them (no release "
            "strips them): downloads.strip_hidden_lines removes them from the published "
            "copies and writes the zips again.",
        ),
        Workaround(
            "mystnb-output-folder",
            "myst-nb",
            None,
            "myst-nb writes executed notebooks to <outdir>/../jupyter_execute, inside the "
            "published html/ root, with no setting to move them: site.move_notebook_outputs "
            "replaces env.mystnb_config with a copy whose output_folder sits beside the "
            "doctrees.",
        ),
    )
}


def slipped(name: str, what: str, location: object = None) -> None:
    """Warn that the workaround ``name`` no longer matches what upstream produces."""
    workaround = WORKAROUNDS[name]
    logger.warning(
        "compperf workaround %r no longer applies: %s. %s changed; check the pages it "
        "touches and update or remove it in docs/_ext/compperf_docs (%s)",
        name,
        what,
        workaround.package,
        workaround.reason,
        location=location,
        type="compperf",
        subtype="workaround",
    )


def _installed(package: str) -> Version | None:
    try:
        return Version(importlib.metadata.version(package))
    except (importlib.metadata.PackageNotFoundError, InvalidVersion):
        return None


def announce_removable(app: Sphinx) -> None:
    """Warn, once per build, about workarounds that the installed upstream makes removable."""
    for workaround in WORKAROUNDS.values():
        if workaround.removable_from is None:
            continue
        installed = _installed(workaround.package)
        if installed is not None and installed >= Version(workaround.removable_from):
            logger.warning(
                "compperf workaround %r is probably removable: %s %s is installed, and "
                "%s or later is expected to make it unnecessary; check the pages it "
                "touches without it, then delete it from compperf_docs.workarounds (%s)",
                workaround.name,
                workaround.package,
                installed,
                workaround.removable_from,
                workaround.reason,
                type="compperf",
                subtype="workaround-removable",
            )


# -- Chinese search ------------------------------------------------------------


class ChineseSearch(SearchChinese):
    """Chinese search whose page script names the stemmer Sphinx actually ships.

    Sphinx 9.0.4 bundles ``english-stemmer.js`` for Chinese pages (it stems the Latin
    words) but assigns ``window.Stemmer = ChineseStemmer``, which does not exist, so the
    search page finds nothing (sphinx-doc/sphinx#14229, fixed after 9.0.4).
    """

    language_name = "English"


def _stemmer_script(language_name: str) -> str:
    return f"{language_name.lower()}-stemmer.js"


def check_chinese_search(app: Sphinx) -> None:
    """Warn when Sphinx's Chinese search no longer bundles the stemmer ChineseSearch names."""
    search = app.config.html_search_language or app.config.language
    if app.builder.format != "html" or not search.startswith("zh"):
        return
    if SearchChinese.js_stemmer_rawcode != _stemmer_script(ChineseSearch.language_name):
        slipped(
            "chinese-search",
            f"Sphinx's Chinese search now bundles {SearchChinese.js_stemmer_rawcode!r}, "
            f"not {_stemmer_script(ChineseSearch.language_name)!r}",
        )


# -- Markup rewritten in every page ---------------------------------------------

# sphinx-doc/sphinx#14030: level 2 is what ARIA 1.1 implied.
_CAPTION = '<p class="caption" role="heading">'
_LABELLED = '<p class="caption" role="heading" aria-level="2">'
_ANY_CAPTION = re.compile(r'<p class="caption"[^>]*>')
# Pygments' code and output blocks, as Sphinx wraps them.
_PRE = '<div class="highlight"><pre>'
_FOCUSABLE_PRE = '<div class="highlight"><pre tabindex="0">'
_ANY_HIGHLIGHT = re.compile(r'<div class="highlight">\s*<pre[^>]*>')


def label_toctree_captions(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Give toctree captions in the page and furo's sidebar their heading level."""
    for key in ("body", "furo_navigation_tree"):
        text = context.get(key)
        if not isinstance(text, str):
            continue
        text = text.replace(_CAPTION, _LABELLED)
        unknown = {tag for tag in _ANY_CAPTION.findall(text) if "aria-level=" not in tag}
        if unknown:
            slipped(
                "toctree-caption-level",
                f"a toctree caption is written as {min(unknown)!r} (expected {_CAPTION!r})",
                location=pagename,
            )
        context[key] = text


def focusable_code_blocks(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Let keyboard users focus (and so scroll) every code and output block."""
    text = context.get("body")
    if not isinstance(text, str):
        return
    text = text.replace(_PRE, _FOCUSABLE_PRE)
    unknown = {tag for tag in _ANY_HIGHLIGHT.findall(text) if 'tabindex="0"' not in tag}
    if unknown:
        slipped(
            "focusable-code-blocks",
            f"a code block is written as {min(unknown)!r} (expected {_PRE!r})",
            location=pagename,
        )
    context["body"] = text


# -- Downloads written by sphinx-gallery -----------------------------------------

# What sphinx-gallery 0.22 writes: the first cell's source as one string in a list.
_CELL_MARKER = "%pip install"


def _new_first_cell(path: Path, text: str, cell: str) -> str | None:
    """The notebook ``text`` with ``cell`` as its first cell; ``None`` when unchanged."""
    notebook = json.loads(text)
    cells = notebook.get("cells") or [{}]
    first = cells[0]
    source = first.get("source")
    old = "".join(source) if isinstance(source, list) else source
    if first.get("cell_type") != "code" or not isinstance(old, str) or _CELL_MARKER not in old:
        slipped(
            "notebook-first-cell",
            f"{path} does not start with the install cell compperf_docs.execute.gallery writes",
        )
        return None
    if old == cell.strip():
        return None
    first["source"] = [cell.strip()]
    return json.dumps(notebook, indent=2)  # as sphinx_gallery.notebook.save_notebook


def rewrite_zip_member(path: Path, member: str, text: str, workaround: str) -> None:
    """Replace ``member`` of the zip ``path`` by ``text``; warn as ``workaround`` if absent."""
    new = path.with_name(path.name + ".new")
    with zipfile.ZipFile(path) as old, zipfile.ZipFile(new, "w") as out:
        if member not in old.namelist():
            slipped(workaround, f"{path} holds no {member}")
            new.unlink()
            return
        for info in old.infolist():
            out.writestr(info, text if info.filename == member else old.read(info))
    new.replace(path)


def rewrite_first_notebook_cell(folder: Path, cell: str) -> list[Path]:
    """Put ``cell`` first in each notebook of a gallery folder and its example's zip.

    sphinx-gallery rewrites the chapter's "download all" zips from these notebooks on
    every build, and Sphinx copies downloads on every build, so the published files
    follow without executing anything.

    Returns
    -------
    list of Path
        The notebooks that changed.
    """
    changed = []
    for notebook in sorted(folder.glob("*.ipynb")):
        text = _new_first_cell(notebook, notebook.read_text(encoding="utf-8"), cell)
        if text is None:
            continue
        notebook.write_text(text, encoding="utf-8")
        example_zip = notebook.with_suffix(".zip")
        if example_zip.is_file():
            rewrite_zip_member(example_zip, notebook.name, text, "notebook-first-cell")
        changed.append(notebook)
    if changed:
        logger.info("compperf: new install cell in %d notebook(s) of %s", len(changed), folder)
    return changed


def setup(app: Sphinx) -> dict[str, object]:
    """Stage 5, every language: the upstream output the site rewrites; each warns when it slips."""
    app.connect("builder-inited", announce_removable)
    app.add_search_language(ChineseSearch)
    app.connect("builder-inited", check_chinese_search)
    app.connect("html-page-context", label_toctree_captions, priority=order.NAVIGATION_LABELS)
    app.connect("html-page-context", focusable_code_blocks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
