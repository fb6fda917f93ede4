"""reStructuredText prose in another language: each paragraph, title and list item replaced.

Sphinx extracts a page's messages paragraph by paragraph (titles, list items, table cells
and admonition titles too), with the lines of each joined by spaces; :func:`translate_rst`
cuts a reST text the same way, looks each message up and writes the translation in its
place, wrapped again by :func:`fill` (a CJK character takes two columns) with titles
underlined to match. What reST does not treat as prose (directives and their options,
link targets, literal blocks, code) stays as it is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = ["Lookup", "columns", "dedent", "fill", "indent", "translate_rst"]

# A translation for a message, or None when there is none.
Lookup = Callable[[str], "str | None"]

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


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def dedent(lines: list[str], n: int) -> list[str]:
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
            if indent(line) > 0:  # a literal block after "::", or a block quote
                end = i
                while end < len(lines) and (not lines[end].strip() or indent(lines[end]) > 0):
                    end += 1
                while not lines[end - 1].strip():
                    end -= 1
                chunk = lines[i:end]
                if literal_next:
                    out += chunk
                else:
                    n = min(indent(x) for x in chunk if x.strip())
                    out += _reindent(self.body(dedent(chunk, n), width - n), " " * n, " " * n)
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
                while end < len(lines) and (not lines[end].strip() or indent(lines[end]) > 0):
                    end += 1
                while not lines[end - 1].strip():
                    end -= 1
                out += self.explicit(lines[i:end], width)
                i = end
            elif _ITEM.match(line):
                marker = _ITEM.match(line).group()
                m = len(marker) if marker.endswith(" ") else len(marker) + 1
                end = i + 1
                while end < len(lines) and (not lines[end].strip() or indent(lines[end]) >= m):
                    end += 1
                while not lines[end - 1].strip():
                    end -= 1
                item = [line[len(marker) :], *dedent(lines[i + 1 : end], m)]
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
        n = min(indent(x) for x in rest if x.strip())
        options = 0
        while options < len(rest) and rest[options].strip() and _OPTION.match(rest[options][n:]):
            options += 1
        content = rest[options:]
        if name in _LITERAL_DIRECTIVES or not any(x.strip() for x in content):
            return [head, *rest]
        translated = self.body(dedent(content, n), width - n)
        return [head, *rest[:options], *_reindent(translated, " " * n, " " * n)]


def translate_rst(text: str, lookup: Lookup, width: int, missing: list[str]) -> str:
    """The reST ``text`` with each paragraph, title and list item translated by ``lookup``.

    Messages without a translation stay English and are appended to ``missing``.
    """
    lines = text.split("\n")
    translated = _Prose(lookup, missing).body(lines, width)
    return "\n".join(translated)
