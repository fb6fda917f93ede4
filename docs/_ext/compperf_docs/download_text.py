"""An example script in another language: its prose, its comments and one line that picks the language.

A downloaded example is the published English ``.py`` with its words replaced. The prose
(the module docstring and the ``# %%`` comment blocks, which sphinx-gallery turns into the
page) is translated paragraph by paragraph with the page's Sphinx catalog, whose
``msgid`` is each paragraph, title or list item with its lines joined by spaces, as
Sphinx extracts it. The comments in the code are translated with the example's compperf
catalog (context ``comment``; :mod:`compperf_docs.code_comments` finds them as
``nox -s translations`` does). Translated text is wrapped again to the width of the
English (a CJK character takes two columns) and titles get underlines to match. The code
stays as it is, except for one line after ``import compperf`` that selects the language.

Text that reStructuredText does not treat as prose (directives and their options, link
targets, literal blocks, code) is kept as it is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

from sphinx_gallery.py_source_parser import _get_docstring_and_rest

from compperf_docs.code_comments import comments

__all__ = ["Lookup", "columns", "fill", "translate_code", "translate_rst", "translate_script"]

# A translation for a message, or None when there is none.
Lookup = Callable[[str], "str | None"]

# Translated prose is wrapped to this many columns (as the English examples are); a
# translated comment too, or to its widest English line when that is wider.
_WIDTH = 79
# sphinx-gallery's text-block header: "# %%" or a line of 20 or more "#".
_TEXT_BLOCK = re.compile(
    r"(?P<header_line>^#{20,}.*|^# ?%%.*)\s(?P<text_content>(?:^#.*\s?)*)", re.MULTILINE
)
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
_ITEM = re.compile(r"^(?:[-*+\u2022]|\d+[.)]|#\.|\(\d+\)|[A-Za-z][.)])( +|$)")
_DIRECTIVE = re.compile(r"^\.\.\s+(?P<name>[\w:-]+)::(?P<args>.*)$")
_EXPLICIT = re.compile(r"^\.\.(\s|$)")
_OPTION = re.compile(r"^:[\w-]+:")
# A border of a simple table: columns of "=" separated by spaces.
_TABLE_BORDER = re.compile(r"^=+( +=+)+\s*$")
# Directives whose content is code or data, never prose; and those whose argument is a
# title that Sphinx extracts.
_LITERAL_DIRECTIVES = {"code-block", "code", "sourcecode", "literalinclude", "math", "raw",
                       "highlight", "csv-table", "graphviz", "ipython"}  # fmt: skip
_TITLED_DIRECTIVES = {"admonition", "topic", "sidebar", "rubric"}
LANGUAGE_LINE = 'compperf.use_language("{language}")'
_IMPORT = "import compperf"


# What fill() keeps whole: inline literals, roles and links, CJK characters one by one,
# words, and the spaces between them.
_ATOM = re.compile(
    r"``.+?``|(?::[\w.:+-]+:)?`[^`]+`_{0,2}|\s+|[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3"
    r"\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\U00020000-\U0003ffff]|[^\s`]+?(?=[\s`]|"
    r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
    r"\U00020000-\U0003ffff]|$)"
)
# A word that, first on a line, reST would read as a list item or explicit markup.
_LINE_START_MARKUP = re.compile(r"^(?:[-*+\u2022|]|\d+[.)]|#\.?|\(\d+\)|\.\.|[A-Za-z][.)])$")
_NO_LINE_START = set("，。、；：！？）」』》】〕,.;:!?)")
_NO_LINE_END = set("（「『《【〔(")


def columns(text: str) -> int:
    """Display width of ``text``: a wide (CJK) character takes two columns."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def fill(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns where it can be, broken where reST allows.

    Lines break at spaces, between two wide (CJK) characters, since CJK text has no
    spaces, and after CJK punctuation (a notebook joins such lines without a space:
    ``pandoc/notebook_language.lua``);
    never inside inline markup (````code````, roles, links) nor
    before a word that would start a list or markup at the beginning of a line, nor
    before closing or after opening CJK punctuation. A word longer than ``width``
    stays whole.
    """
    units: list[list] = []  # [space before it, text]: what stays on one line
    space, previous = False, ""
    for atom in _ATOM.findall(text):
        if atom.isspace():
            space = True
            continue
        breakable = bool(units) and not _LINE_START_MARKUP.match(atom) and (
            space or (
                (_wide(previous[-1]) and (_wide(atom[0]) or previous[-1] in _NO_LINE_START))
                and atom[0] not in _NO_LINE_START and previous[-1] not in _NO_LINE_END
            )
        )  # fmt: skip
        if breakable:
            units.append([space, atom])
        elif units:
            units[-1][1] += (" " if space else "") + atom
        else:
            units.append([False, atom])
        previous, space = atom, False
    lines: list[str] = []
    line, used = "", 0
    for space, unit in units:
        piece = (" " if space and line else "") + unit
        if line and used + columns(piece) > width:
            lines.append(line)
            line, used = unit, columns(unit)
        else:
            line, used = line + piece, used + columns(piece)
    lines.append(line)
    return lines


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _dedent(lines: list[str], n: int) -> list[str]:
    return [line[n:] if line.strip() else "" for line in lines]


def _reindent(lines: list[str], first: str, rest: str) -> list[str]:
    return [(first if i == 0 else rest) + line if line else "" for i, line in enumerate(lines)]


class _Prose:
    """Translates one reST text, collecting the messages that have no translation."""

    def __init__(self, lookup: Lookup, missing: list[str]) -> None:
        self.lookup, self.missing = lookup, missing

    def message(self, msgid: str) -> str | None:
        found = self.lookup(msgid)
        if not found:
            self.missing.append(msgid)
        return found or None

    def body(self, lines: list[str], width: int) -> list[str]:
        """``lines`` (dedented, blank lines as ""), translated; the same when nothing is."""
        out: list[str] = []
        i, literal_next = 0, False
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                out.append(line)
                i += 1
                continue
            # The chunk: this line and the ones that belong to it.
            if _indent(line) > 0:  # a literal block after "::", or a block quote
                end = i
                while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > 0):
                    end += 1
                while not lines[end - 1].strip():
                    end -= 1
                chunk = lines[i:end]
                if literal_next:
                    out += chunk
                else:
                    n = min(_indent(x) for x in chunk if x.strip())
                    out += _reindent(self.body(_dedent(chunk, n), width - n), " " * n, " " * n)
                i, literal_next = end, False
                continue
            literal_next = False
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            after = lines[i + 2] if i + 2 < len(lines) else ""
            if _TABLE_BORDER.match(line):
                end = i + 1
                while end < len(lines) and lines[end].strip():
                    end += 1
                out += self.table(lines[i:end])
                i = end
            elif (
                _ADORNMENT.match(line)
                and nxt.strip()
                and _ADORNMENT.match(after)
                and after[0] == line[0]
            ):
                out += self.title(lines[i : i + 3], nxt.strip(), line[0], overline=True)
                i += 3
            elif _ADORNMENT.match(nxt) and not _ADORNMENT.match(line):
                out += self.title(lines[i : i + 2], line.strip(), nxt[0], overline=False)
                i += 2
            elif _ADORNMENT.match(line):  # a transition
                out.append(line)
                i += 1
            elif _DIRECTIVE.match(line) or _EXPLICIT.match(line):
                end = i + 1
                while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > 0):
                    end += 1
                while not lines[end - 1].strip():
                    end -= 1
                out += self.explicit(lines[i:end], width)
                i = end
            elif _ITEM.match(line):
                marker = _ITEM.match(line).group()
                m = len(marker) if marker.endswith(" ") else len(marker) + 1
                end = i + 1
                while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) >= m):
                    end += 1
                while not lines[end - 1].strip():
                    end -= 1
                item = [line[len(marker) :], *_dedent(lines[i + 1 : end], m)]
                translated = self.body(item, width - m)
                out += _reindent(translated, marker.ljust(m), " " * m)
                i = end
            else:
                end = i
                while end < len(lines) and lines[end].strip():
                    end += 1
                paragraph = lines[i:end]
                text = " ".join(x.strip() for x in paragraph)
                found = self.message(text)
                out += fill(found, width) if found is not None and found != text else paragraph
                literal_next = text.endswith("::")
                i = end
        return out

    def title(self, lines: list[str], text: str, char: str, *, overline: bool) -> list[str]:
        found = self.message(text)
        if not found or found == text:
            return lines
        rule = char * columns(found)
        return [rule, found, rule] if overline else [found, rule]

    def table(self, rows: list[str]) -> list[str]:
        """A simple table with each cell translated and its columns widened to fit."""
        starts = [m.start() for m in re.finditer(r"=+", rows[0])]
        cells = []
        for row in rows:
            if _TABLE_BORDER.match(row):
                cells.append(None)
                continue
            bounds = [*starts[1:], None]
            texts = [row[a:b].strip() for a, b in zip(starts, bounds, strict=True)]
            cells.append([(self.message(t) or t) if t else "" for t in texts])
        if all(c is None or c == [row[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
               for c, row in zip(cells, rows, strict=True)):  # fmt: skip
            return rows
        widths = [max(columns(c[k]) for c in cells if c is not None) for k in range(len(starts))]
        border = "  ".join("=" * w for w in widths)
        return [
            border if c is None
            else "  ".join(t + " " * (w - columns(t)) for t, w in zip(c, widths, strict=True)).rstrip()
            for c in cells
        ]  # fmt: skip

    def explicit(self, chunk: list[str], width: int) -> list[str]:
        directive = _DIRECTIVE.match(chunk[0])
        if directive is None:  # a link target, comment, footnote or substitution
            return chunk
        name, args = directive["name"], directive["args"].strip()
        head = chunk[0]
        if name in _TITLED_DIRECTIVES and args:
            found = self.message(args)
            if found and found != args:
                head = f".. {name}:: {found}"
        rest = chunk[1:]
        if not rest:
            return [head]
        n = min(_indent(x) for x in rest if x.strip())
        options = 0
        while options < len(rest) and rest[options].strip() and _OPTION.match(rest[options][n:]):
            options += 1
        content = rest[options:]
        if name in _LITERAL_DIRECTIVES or not any(x.strip() for x in content):
            return [head, *rest]
        translated = self.body(_dedent(content, n), width - n)
        return [head, *rest[:options], *_reindent(translated, " " * n, " " * n)]


def translate_rst(text: str, lookup: Lookup, width: int, missing: list[str]) -> str:
    """The reST ``text`` with each paragraph, title and list item translated by ``lookup``.

    Messages without a translation stay English and are appended to ``missing``.
    """
    lines = text.split("\n")
    translated = _Prose(lookup, missing).body(lines, width)
    return "\n".join(translated)


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
    n = min((_indent(x) for x in body if x.strip()), default=0)
    before = len(missing)
    translated = translate_rst("\n".join(_dedent(body, n)), lookup, _WIDTH - 1 - n, missing)
    if translated == "\n".join(_dedent(body, n)) and len(missing) == before:
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
