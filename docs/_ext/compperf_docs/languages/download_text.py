"""An example script in another language: its prose, its comments and one line that picks the language.

A downloaded example is the published English ``.py`` with its words replaced. The prose
(the module docstring and the ``# %%`` comment blocks, which sphinx-gallery turns into the
page) is translated paragraph by paragraph with the page's Sphinx catalog, whose
``msgid`` is each paragraph, title or list item with its lines joined by spaces, as
Sphinx extracts it (:mod:`compperf_docs.languages.rst_text`). The comments in the code are
translated with the example's compperf catalog (context ``comment``;
:mod:`compperf_docs.languages.code_comments` finds them as ``nox -s translations`` does), wrapped
again at their indentation. The code stays as it is, except for one line after
``import compperf`` that selects the language.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx_gallery.py_source_parser import _get_docstring_and_rest

from compperf_docs.languages.code_comments import comments
from compperf_docs.languages.rst_text import Lookup, dedent, fill, indent, translate_rst

__all__ = ["LANGUAGE_LINE", "translate_code", "translate_script"]

# Translated prose is wrapped to this many columns (as the English examples are); a
# translated comment too, or to its widest English line when that is wider.
_WIDTH = 79
# sphinx-gallery's text-block header: "# %%" or a line of 20 or more "#".
_TEXT_BLOCK = re.compile(
    r"(?P<header_line>^#{20,}.*|^# ?%%.*)\s(?P<text_content>(?:^#.*\s?)*)", re.MULTILINE
)
LANGUAGE_LINE = 'compperf.use_language("{language}")'
_IMPORT = "import compperf"


def _comment_width(lines: list[str]) -> int:
    return max(_WIDTH, *(len(line) for line in lines))


def translate_code(code: str, lookup: Lookup, missing: list[str]) -> str:
    """``code`` with its comments translated by ``lookup`` (comments as in the catalogs).

    A comment on lines of its own is wrapped again at its indentation; one after code
    stays on its line.
    """
    lines = code.split("\n")
    for comment in reversed(comments(code)):
        found = lookup(comment.text)
        if not found:
            missing.append(comment.text)
            continue
        if found == comment.text:
            continue
        first, last = comment.first_line - 1, comment.last_line - 1
        if comment.trailing:
            line = lines[first]
            lines[first] = f"{line[: comment.column]}# {found}"
            continue
        old = lines[first : last + 1]
        prefix = " " * comment.column + "# "
        new = [prefix + part for part in fill(found, _comment_width(old) - len(prefix))]
        lines[first : last + 1] = new
    return "\n".join(lines)


def _text_block(content: str, lookup: Lookup, missing: list[str]) -> str:
    """One ``# %%`` block's comment lines (``content``), translated."""
    end = "\n" if content.endswith("\n") else ""
    lines = content.removesuffix("\n").split("\n")
    body = [line[1:] for line in lines]  # without "#"
    n = min((indent(x) for x in body if x.strip()), default=0)
    before = len(missing)
    translated = translate_rst("\n".join(dedent(body, n)), lookup, _WIDTH - 1 - n, missing)
    if translated == "\n".join(dedent(body, n)) and len(missing) == before:
        return content
    return "\n".join("#" + " " * n + x if x else "#" for x in translated.split("\n")) + end


def _docstring(head: str, lookup: Lookup, missing: list[str]) -> str:
    quotes = min((head.find(q) for q in ('"""', "'''") if q in head), default=-1)
    if quotes < 0:
        return head
    quote = head[quotes : quotes + 3]
    end = head.rindex(quote)
    inner = head[quotes + 3 : end]
    translated = translate_rst(inner, lookup, _WIDTH, missing)
    return head[: quotes + 3] + translated + head[end:]


def translate_script(
    text: str, language: str, prose: Lookup, comment: Lookup, path: Path
) -> tuple[str, list[tuple[str, str]]]:
    """The example ``text`` (a published ``.py``) in ``language``.

    Parameters
    ----------
    text : str
        The English script, as published (hidden lines already removed).
    language : str
        The language code written into the added ``compperf.use_language`` line.
    prose, comment : callable
        Translations of the page's paragraphs and of the code's comments.
    path : Path
        The file ``text`` was read from (sphinx-gallery's parser reads it from there).

    Returns
    -------
    (str, list of (str, str))
        The translated script, and what had no translation: ``("prose", text)``,
        ``("comment", text)``, or ``("code", what)`` when no ``import compperf`` line
        is there to select the language after.
    """
    words: list[str] = []
    notes: list[str] = []
    _, rest, lineno, _ = _get_docstring_and_rest(path)
    all_lines = text.split("\n")
    head = "\n".join(all_lines[: lineno - 1])
    if "\n".join(all_lines[lineno - 1 :]) != rest:
        raise ValueError(f"{path}: the docstring does not end where sphinx-gallery says it does")
    parts = [_docstring(head, prose, words)]
    pos = 0
    body = []
    for match in _TEXT_BLOCK.finditer(rest):
        body.append(translate_code(rest[pos : match.start()], comment, notes))
        body.append(match.group("header_line"))
        body.append(rest[match.end("header_line") : match.start("text_content")])
        body.append(_text_block(match.group("text_content"), prose, words))
        pos = match.end()
    body.append(translate_code(rest[pos:], comment, notes))
    parts.append("".join(body))
    lines = "\n".join(parts).split("\n")
    missing = [("prose", w) for w in words] + [("comment", c) for c in notes]
    if _IMPORT not in lines:
        missing.append(("code", f"no line {_IMPORT!r} to select the language after"))
    else:
        lines.insert(lines.index(_IMPORT) + 1, LANGUAGE_LINE.format(language=language))
    return "\n".join(lines), missing
