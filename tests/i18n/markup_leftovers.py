"""Inline markup that a reader would see raw: double backticks, ``:role:`` text, asterisks.

reST only parses an inline literal or role whose start is preceded by a space, an opening
bracket or punctuation, and whose end is followed by a space or punctuation of certain
kinds (docutils' ``Inliner``). A Chinese full-width opening parenthesis (U+FF08) or a
letter such as "的" right after the closing backticks leaves the markup unparsed: the
page shows the backticks. These
helpers find such places in a catalog message, in its parsed doctree, and in built HTML.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from docutils.utils import punctuation_chars

__all__ = ["boundary_problems", "doctree_leftovers", "html_leftovers", "visible_text"]

# docutils.parsers.rst.states.Inliner.init_customizations, without character-level markup;
# a backslash (an escaped space, "\ ") counts as the separator it stands for.
_BEFORE = re.compile(
    f"(?:^|(?<=[\\s{punctuation_chars.openers}{punctuation_chars.delimiters}\\\\]))$"
)
# (The sets are regex character classes, with ranges: "、-〃" holds "。".)
_AFTER = re.compile(
    f"[\\s\\\\{punctuation_chars.closing_delimiters}{punctuation_chars.delimiters}"
    f"{punctuation_chars.closers}]"
)
# What the translator meant as one construct: ``literal``, :role:`text`, `link`_ / `x`,
# **strong**, *emphasis* (the verdicts' *yes* / *no*, left unparsed before a full-width bracket).
_CONSTRUCT = re.compile(
    r"``[^`]+?``|:[\w.+-]+(?::[\w.+-]+)*:`[^`]+`|`[^`]+`_{0,2}"
    r"|\*\*[^*\s][^*]*?\*\*|\*[^*\s][^*]*?(?<!\s)\*"
)
# Leftovers in text a reader sees: two backticks, or a role name before a backtick.
_RAW = re.compile(r"``|:[a-z]+(?::[a-z]+)?:`")


def _fits_after(char: str) -> bool:
    return _AFTER.match(char) is not None


def boundary_problems(text: str) -> list[str]:
    """Each inline literal or role of ``text`` that reST would not parse where it stands."""
    problems = []
    for match in _CONSTRUCT.finditer(text):
        start, end = match.span()
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        if before and not _BEFORE.search(text[:start]):
            problems.append(f"{before!r} right before {match[0]!r}")
        if after and not _fits_after(after):
            problems.append(f"{after!r} right after {match[0]!r}")
    return problems


def doctree_leftovers(text: str) -> list[str]:
    """Raw markup left in ``text`` once docutils has parsed it (roles taken as known)."""
    import io

    from docutils import nodes
    from docutils.core import publish_doctree
    from docutils.parsers.rst import roles

    for name in ("ref", "doc", "func", "class", "meth", "mod", "attr", "obj", "exc", "data"):
        if name not in roles._roles:
            roles.register_generic_role(name, nodes.literal)
    settings = {"report_level": 5, "halt_level": 5, "warning_stream": io.StringIO()}
    tree = publish_doctree(text, settings_overrides=settings)
    found = []
    for node in tree.findall(nodes.Text):
        if _RAW.search(node.astext()):
            found.append(node.astext())
    return found


class _Visible(HTMLParser):
    """The text of a page outside code blocks, scripts and styles."""

    _SKIP = frozenset({"pre", "script", "style", "textarea"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self._SKIP:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if not self.depth:
            self.parts.append(data)


def visible_text(page: str) -> str:
    """The text a reader sees of an HTML page, code blocks left out."""
    parser = _Visible()
    parser.feed(page)
    return "".join(parser.parts)


def html_leftovers(page: str, context: int = 30) -> list[str]:
    """Raw reST markup in the visible text of a built page, each with some text around it
    (the two ends of one unparsed literal, close together, are one leftover)."""
    text = visible_text(page)
    found, last = [], -context
    for match in _RAW.finditer(text):
        if match.start() - last > context:
            start = max(match.start() - context, 0)
            found.append(html.unescape(text[start : match.end() + context]).strip())
        last = match.end()
    return found
