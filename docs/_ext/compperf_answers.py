"""Answers folded under the exercises: a reader tries the exercises first, one click shows them.

Every example ends with Summary, Exercises and Answers (README "Writing an example"). On
an example page the Answers section keeps its title, so the page's table of contents
still leads there, and everything under it (prose, code and what that code printed and
drew) goes into one ``<details>`` block labelled in the page's language, "Show the
answers". sphinx-gallery's footer after the last cell (running time, the machine's
account of the run, the downloads) stays outside. Nothing else changes: the answers ran
as they always did, and the downloads and notebooks keep them as written.
"""

from __future__ import annotations

import html

import compperf_folding
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

_GALLERY = "auto_examples"
# The section's id: docutils makes it from the English title, in every language.
SECTION_ID = "answers"
SUMMARY = {"en": "Show the answers", "zh_CN": "显示答案", "ru": "Показать ответы"}
# What sphinx-gallery and compperf add after the last cell of a page: it stays unfolded.
_FOOTER_CLASSES = ("sphx-glr-timing", "compperf-run", "sphx-glr-footer")


class answers(nodes.General, nodes.Element):
    """An example's answers: ``<details>`` in HTML, as is elsewhere."""


def _visit_html(self, node: answers) -> None:
    summary = html.escape(node["summary"])
    self.body.append(f'<details class="compperf-answers"><summary>{summary}</summary>\n')


def _is_footer(node: nodes.Node) -> bool:
    if isinstance(node, (nodes.target, addnodes.only)):
        return True
    classes = node.get("classes", []) if isinstance(node, nodes.Element) else []
    return any(name.startswith(_FOOTER_CLASSES) for name in classes)


def fold(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Fold the Answers section of an example page into a ``<details>`` block."""
    if app.builder.format != "html":
        return  # a message catalog (gettext) or another format keeps the page as written
    parts = docname.split("/")
    if len(parts) != 3 or parts[0] != _GALLERY or parts[2] == "index":
        return
    section = next((s for s in doctree.findall(nodes.section) if SECTION_ID in s["ids"]), None)
    if section is None or not section.children:
        return
    body = section.children[1:]  # after the title
    end = next((i for i, node in enumerate(body) if _is_footer(node)), len(body))
    if end == 0:
        return
    language = app.config.language or "en"
    block = answers("", summary=SUMMARY.get(language, SUMMARY["en"]))
    for node in body[:end]:
        section.remove(node)
        block += node
    section.insert(1, block)


def setup(app: Sphinx) -> dict[str, object]:
    compperf_folding.add_details_node(app, answers, _visit_html)
    app.connect("doctree-resolved", fold)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
