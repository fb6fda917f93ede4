"""A page's description (``<meta name="description">``, ``og:description``) from its prose.

sphinxext-opengraph makes one from every text of the page in order: section titles end
with ":", list items and table cells with ",", and the whole is cut after 200 characters
with "...". The Results pages' descriptions were their tables (",,,,, 机器, 设备, …"),
others ended in a cut list (", Pyth..."), and the titles of empty sections came out as
"设备: 计时: 测量:". Here a page's description is its first paragraphs of prose (no
titles, lists, tables, notes, code or outputs), in the page's language, cut at the end of
a sentence where one ends late enough, else at a word (a character in Chinese), with the
language's ellipsis; a paragraph ending in a colon is left out with what it introduces. A page's own ``og:description`` field or ``.. meta::`` description
wins; sphinxext-opengraph makes the other tags as before.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes

from compperf_docs import order

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["describe_page", "description", "setup"]

# Not prose a description is made of.
_SKIPPED = (
    nodes.Admonition,
    nodes.Invisible,
    nodes.Sequential,
    nodes.caption,
    nodes.citation,
    nodes.field_list,
    nodes.figure,
    nodes.footnote,
    nodes.literal_block,
    nodes.raw,
    nodes.rubric,
    nodes.sidebar,
    nodes.table,
    nodes.title,
    nodes.topic,
)
# Classes of paragraphs and containers that are the gallery's or the build's, not prose:
# sphinx-gallery's running time and download boxes, myst-nb's cells, the Colab button.
_NOT_PROSE = re.compile(r"^(sphx-glr|cell|compperf-|toctree)")
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def _prose(paragraph: nodes.paragraph) -> bool:
    # A resolved table of contents is a compact paragraph holding lists.
    if isinstance(paragraph, addnodes.compact_paragraph) or any(
        isinstance(inner, _SKIPPED) for inner in paragraph.findall(include_self=False)
    ):
        return False
    for ancestor in _ancestors(paragraph):
        if isinstance(ancestor, _SKIPPED):
            return False
        # sphinx-gallery gives its page's section a class too: only these are not prose.
        classes = ancestor.get("classes", [])
        if isinstance(ancestor, (nodes.paragraph, nodes.container, nodes.compound)) and any(
            _NOT_PROSE.match(name) for name in classes
        ):
            return False
    return True


def _ancestors(node: nodes.Node) -> list[nodes.Element]:
    found = []
    while node is not None:
        if isinstance(node, nodes.Element):
            found.append(node)
        node = node.parent
    return found


def _joined(parts: list[str]) -> str:
    text = ""
    for part in parts:
        if text and not (_CJK.match(text[-1]) and _CJK.match(part[0])):
            text += " "
        text += part
    return text


def _cut(text: str, length: int, language: str) -> str:
    if len(text) <= length:
        return text
    chinese = language.startswith("zh")
    ellipsis = "……" if chinese else "…"
    kept = text[: length - len(ellipsis) + 1]
    ends = [match.end() for match in _SENTENCE_END.finditer(kept)]
    if ends and ends[-1] >= length // 2:
        return kept[: ends[-1]]
    # At the last space; Chinese has none between words, so at the last character.
    kept = kept[: kept.rindex(" ")] if not chinese and " " in kept else kept[:-1]
    return kept.rstrip(" ,;:，、；：") + ellipsis


def description(doctree: nodes.document, length: int = 200, language: str = "en") -> str:
    """The first paragraphs of prose of ``doctree``, at most ``length`` characters."""
    parts: list[str] = []
    for paragraph in doctree.findall(nodes.paragraph):
        if not _prose(paragraph):
            continue
        text = " ".join(paragraph.astext().split())
        if not text or text.endswith((":", "：")):
            continue  # a paragraph that introduces a list, a table or an output left out
        parts.append(text)
        if len(_joined(parts)) > length:
            break
    return _cut(_joined(parts), length, language)


def describe_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Give the page our description before sphinxext-opengraph makes its tags."""
    if doctree is None or app.builder.format != "html":
        return
    length = int(getattr(app.config, "ogp_description_length", 200))
    text = description(doctree, length, app.config.language or "en")
    if not text:
        return
    meta = dict(context.get("meta") or {})
    meta.setdefault("og:description", html.escape(text, quote=False))
    context["meta"] = meta
    tags = context.get("metatags", "")
    if 'name="description"' not in tags:
        tags += f'<meta name="description" content="{html.escape(text)}" />\n'
        context["metatags"] = tags


def setup(app: Sphinx) -> None:
    """Before sphinxext-opengraph's own html-page-context handler (``order.PAGE_DESCRIPTION``)."""
    app.connect("html-page-context", describe_page, priority=order.PAGE_DESCRIPTION)
