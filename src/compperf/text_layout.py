"""Text laid out in columns: display width, paragraphs that wrap CJK text, plain tables.

Counted in terminal columns, not characters: a Chinese character takes two. Nothing here
knows about languages or catalogs; :mod:`compperf.i18n` lays out its messages with it.
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Sequence

__all__ = [
    "LINE_WIDTH",
    "PARAGRAPH_WIDTH",
    "display_width",
    "fold_long_lines",
    "is_wide",
    "lay_out_table",
    "wrap",
]

# Conclusions are printed as paragraphs of this many columns (a CJK character takes two).
PARAGRAPH_WIDTH = 70
# No printed line is wider than this: a longer one is folded (:func:`fold_long_lines`).
LINE_WIDTH = 80
# A folded line's continuation is indented by this much more than the line itself.
_CONTINUATION = "  "
_SHORTEST_CONTINUATION = 16  # columns


def is_wide(char: str) -> bool:
    """Whether ``char`` takes two columns (East Asian wide or full-width)."""
    return unicodedata.east_asian_width(char) in "WF"


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal or an output block: two per CJK character."""
    return sum(2 if is_wide(char) else 1 for char in text)


def lay_out_table(title: str | None, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: the first column aligned left, the others right, two spaces
    apart, a line of dashes under the header, ``title`` (if any) above it; widths are
    counted in columns."""
    widths = [max(display_width(row[col]) for row in [header, *rows]) for col in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [cells[0] + " " * (widths[0] - display_width(cells[0]))]
        padded += [
            " " * (w - display_width(c)) + c for c, w in zip(cells[1:], widths[1:], strict=True)
        ]
        return "  ".join(padded).rstrip()

    lines = [line(header), "  ".join("-" * w for w in widths), *map(line, rows)]
    if title:
        lines.insert(0, title)
    return "\n".join(lines)


# A CJK line never starts with closing punctuation nor ends with opening punctuation.
_NO_LINE_START = set("，。、；：！？）」』》】〕,.;:!?)")
_SHORTEST_LAST_LINE = 8  # columns: four CJK characters
_NO_LINE_END = set("（「『《【〔(")


def fold_long_lines(text: str, width: int = LINE_WIDTH) -> str:
    """``text`` with each line wider than ``width`` columns broken into lines that fit.

    Lines that fit are left as they are (aligned columns, indentation). A folded line's
    continuation lines are indented two columns more than the line, so that a reader sees
    where one printed line ends; a single word wider than the line (a path) stays whole.
    """
    lines = []
    for line in text.split("\n"):
        if display_width(line) <= width:
            lines.append(line)
            continue
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        room = max(width - len(indent) - len(_CONTINUATION), 20)
        folded = wrap(body, room).split("\n")
        # No continuation of a word or two alone ("19.9 ms"): narrower lines give it more.
        for narrower in (8, 16, 24):
            if display_width(folded[-1]) >= _SHORTEST_CONTINUATION or room - narrower < 20:
                break
            folded = wrap(body, room - narrower).split("\n")
        lines.append(indent + folded[0])
        lines += [indent + _CONTINUATION + rest for rest in folded[1:]]
    return "\n".join(lines)


def wrap(text: str, width: int = PARAGRAPH_WIDTH) -> str:
    """Break ``text`` into lines of at most ``width`` columns.

    Text without wide characters is filled by :func:`textwrap.fill` (a word is never
    split, not even at its hyphens). Text with CJK
    characters (two columns each, no spaces between words) may break between any two of
    them, except before closing or after opening punctuation.
    """
    if not any(map(is_wide, text)):
        return textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False)
    tokens: list[str] = []
    for chunk in text.split():
        word = ""
        for char in chunk:
            if is_wide(char):
                if word:
                    tokens.append(word)
                    word = ""
                tokens.append(char)
            else:
                word += char
        if word:
            tokens.append(word)
        tokens.append(" ")
    lines: list[str] = []
    line, columns = "", 0
    for token in tokens[:-1]:
        size = 2 if is_wide(token[0]) else len(token)
        if token == " ":
            if line:
                line, columns = line + " ", columns + 1
            continue
        if columns + size > width and line.strip() and token[0] not in _NO_LINE_START:
            carry = ""
            if line[-1] in _NO_LINE_END:
                line, carry = line[:-1], line[-1]
            lines.append(line.rstrip())
            line, columns = carry, 2 * len(carry)
        line, columns = line + token, columns + size
    lines.append(line.rstrip())
    # No last line of one character and its full stop: it takes CJK characters (never
    # half a word, never a line-starting comma) from the line above.
    while len(lines) > 1 and display_width(lines[-1]) < _SHORTEST_LAST_LINE:
        above = lines[-2]
        take = 1
        while take < len(above) and above[-take] in _NO_LINE_START:
            take += 1
        if take >= len(above) or not is_wide(above[-take]):
            break
        lines[-2], lines[-1] = above[:-take], above[-take:] + lines[-1]
    return "\n".join(lines)
