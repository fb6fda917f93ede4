"""Sentences and figure labels in the reader's language, recorded so that a docs build can show them in every language.

An example prints a conclusion with :func:`say` and labels a figure with :func:`tr`. Both
look the message up in the catalogs that ship with compperf (``compperf/locales``), in the
language chosen with :func:`use_language` (English unless a script chooses another), and
fill in its named placeholders. While recording is on (the docs build turns it on around
each example), every message is also kept with its values, so that the page can be shown
in another language later with the same numbers, without running the example again.
"""

from __future__ import annotations

import contextlib
import gettext
import importlib.metadata
import re
import string
import sys
import textwrap
import unicodedata
import warnings
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from compperf import numerals

__all__ = [
    "FONTS",
    "FONT_WHEELS",
    "MissingTranslation",
    "Text",
    "add_wheel_fonts",
    "available_languages",
    "display_width",
    "language",
    "paragraph",
    "parts",
    "render",
    "say",
    "start_recording",
    "stop_recording",
    "table",
    "tr",
    "tr_plural",
    "use_language",
    "wheel_fonts",
    "wrap",
]

LOCALES = Path(__file__).resolve().parent / "locales"
SOURCE_LANGUAGE = "en"
# Conclusions are printed as paragraphs of this many columns (a CJK character takes two).
_PARAGRAPH_WIDTH = 70

_language = SOURCE_LANGUAGE
_recorded: list[dict[str, Any]] | None = None


class MissingTranslation(LookupError):
    """A message, or one of its plural forms, has no translation in a language's catalogs."""


class Text(str):
    """A translated, formatted message that remembers how it was made.

    ``record`` is the JSON-able description that ``compperf.i18n.render`` turns into the same text
    in any language.
    """

    record: dict[str, Any]

    def __new__(cls, text: str, record: dict[str, Any]) -> Text:  # noqa: PYI034
        self = super().__new__(cls, text)
        self.record = record
        return self

    def __reduce__(self) -> tuple[type[Text], tuple[str, dict[str, Any]]]:
        # A figure keeps its labels (categorical ticks hold the Text itself), and the docs
        # build pickles figures to draw them again in each language.
        return (Text, (str(self), self.record))


def available_languages() -> list[str]:
    """Language codes with catalogs in this installation, the source language first."""
    found = sorted(p.parent.name for p in LOCALES.glob("*/LC_MESSAGES"))
    return [SOURCE_LANGUAGE, *[code for code in found if code != SOURCE_LANGUAGE]]


def use_language(code: str) -> None:
    """Print and label in language ``code`` from now on (``"en"``, ``"zh_CN"``, ``"ru"``).

    Raises
    ------
    ValueError
        If compperf has no catalogs for ``code``.
    """
    known = available_languages()
    if code not in known:
        raise ValueError(f"no compperf catalogs for language {code!r} (found: {', '.join(known)})")
    global _language
    _language = code
    if "matplotlib" in sys.modules:  # compperf never imports it; a script that draws has
        _use_fonts(code)


# Fonts that draw a language's script in figures, where DejaVu Sans (matplotlib's own,
# which covers Latin and Cyrillic) cannot: Linux (Debian's fonts-noto-cjk), macOS, Windows.
FONTS = {"zh_CN": ("Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei")}
# Wheels on PyPI that ship the first of those fonts, for a machine that has none of them:
# noto-cjk-sans-otc holds Noto Sans CJK 2.004 (OFL-1.1), the file Debian's fonts-noto-cjk
# installs. The docs and tests sessions install it; compperf registers it with matplotlib
# whenever it is installed (matplotlib itself only looks in the system's font folders).
FONT_WHEELS = {"zh_CN": "noto-cjk-sans-otc"}
_FONT_SUFFIXES = (".ttc", ".otc", ".otf", ".ttf")


def wheel_fonts(code: str, wheel: str | None = None) -> list[Path]:
    """The font files that language ``code``'s font wheel installed; none if it is not.

    ``wheel`` names the distribution instead of :data:`FONT_WHEELS` (the docs build passes
    the site's ``font-wheel``).
    """
    name = wheel or FONT_WHEELS.get(code)
    if not name:
        return []
    try:
        files = importlib.metadata.distribution(name).files or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return sorted(
        Path(file.locate()).resolve() for file in files if file.suffix.lower() in _FONT_SUFFIXES
    )


def add_wheel_fonts(code: str, wheel: str | None = None) -> list[Path]:
    """Make matplotlib know the fonts of ``code``'s font wheel (:data:`FONT_WHEELS`).

    Returns the font files added or already known; none when the wheel is not installed.
    """
    from matplotlib import font_manager

    paths = wheel_fonts(code, wheel)
    known = {Path(entry.fname).resolve() for entry in font_manager.fontManager.ttflist}
    for path in paths:
        if path not in known:
            font_manager.fontManager.addfont(str(path))
    return paths


def _install_hint(code: str) -> str:
    wheel = FONT_WHEELS.get(code)
    return (
        f"python -m pip install {wheel}" if wheel else "install one"
    ) + " (or on Debian or Ubuntu: apt-get install fonts-noto-cjk)"


def _use_fonts(code: str) -> None:
    """Let matplotlib fall back to the language's fonts for the glyphs DejaVu Sans lacks."""
    from matplotlib import font_manager, rcParams

    add_wheel_fonts(code)
    installed = {font.name for font in font_manager.fontManager.ttflist}
    fonts = [name for name in FONTS.get(code, ()) if name in installed]
    if FONTS.get(code) and not fonts:
        warnings.warn(
            f"no font for {code} text in figures is installed (any of: "
            f"{', '.join(FONTS[code])}); {_install_hint(code)}, "
            "then delete matplotlib's font cache (matplotlib.get_cachedir())",
            stacklevel=3,
        )
    rcParams["font.family"] = ["sans-serif", *fonts]


def language() -> str:
    """The language that :func:`tr` and :func:`say` use now."""
    return _language


@cache
def _catalog(code: str) -> gettext.NullTranslations:
    """Every ``.mo`` file of a language, merged: the package's and each example's."""
    merged = gettext.NullTranslations()
    if code == SOURCE_LANGUAGE:
        return merged
    files = sorted((LOCALES / code / "LC_MESSAGES").rglob("*.mo"))
    translations = []
    for path in files:
        with path.open("rb") as handle:
            translations.append(gettext.GNUTranslations(handle))
    if not translations:
        raise ValueError(f"no compiled catalogs (.mo) under {LOCALES / code}")
    first, *rest = translations
    # One lookup table: each catalog holds its own messages, and all share Plural-Forms.
    for other in rest:
        first._catalog.update(other._catalog)  # gettext has no public merge
    return first


def _lookup(record: Mapping[str, Any], code: str, strict: bool) -> str:
    message, plural, n = record["message"], record.get("plural"), record.get("n")
    catalog = _catalog(code)
    if code == SOURCE_LANGUAGE:
        return message if plural is None or n == 1 else plural
    table = getattr(catalog, "_catalog", {})
    found = table.get(message if plural is None else (message, catalog.plural(n)))
    if found:
        return found
    if strict:
        raise MissingTranslation(f"no {code} translation of {message!r}")
    return message if plural is None or n == 1 else plural


def _fields(message: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(message) if name is not None}


def render(record: Mapping[str, Any], code: str, *, strict: bool = False) -> str:
    """The text of a recorded message in language ``code``, with the values it was made with.

    Parameters
    ----------
    record : mapping
        A :attr:`Text.record`: ``message``, ``plural`` and ``n`` (plural messages),
        ``values`` (name to value or nested record) and ``wrap`` (columns, or None).
    code : str
        Language code.
    strict : bool
        Raise instead of falling back to English when a translation is missing.

    Raises
    ------
    MissingTranslation
        With ``strict``, if the message (or a nested one) has no translation.
    KeyError
        If the translation names a placeholder that the message does not have.

    Notes
    -----
    A table's record is ``{"table": {"title": ..., "header": [...], "rows": [[...]]}}``
    (see :func:`table`): each of its cells is a string or a record, and its columns are
    laid out again for the widths of the cells in ``code``.
    """
    if "table" in record:
        return _render_table(record["table"], code, strict)
    values = {
        name: render(value, code, strict=strict) if isinstance(value, Mapping) else value
        for name, value in record.get("values", {}).items()
    }
    template = _lookup(record, code, strict)
    try:
        text = _formatter(code).vformat(template, (), values)
    except (KeyError, IndexError) as error:
        raise KeyError(
            f"the {code} translation of {record['message']!r} has a placeholder the "
            f"message lacks: {error}"
        ) from None
    return wrap(text, record["wrap"]) if record.get("wrap") else text


def _value(value: object) -> object:
    if isinstance(value, Text):
        return value.record
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    with parts():  # e.g. a Measurement, whose text is a message of its own
        text = str(value)
    return text.record if isinstance(text, Text) else text


def _make(record: dict[str, Any]) -> Text:
    text = Text(render(record, _language), record)
    if _recorded is not None:
        _recorded.append(record)
    return text


def _record(message: str, values: Mapping[str, object], **extra: object) -> dict[str, Any]:
    missing = _fields(message) - set(values)
    if missing:
        raise KeyError(f"message {message!r} needs values for {', '.join(sorted(missing))}")
    return {
        "message": message,
        "plural": None,
        "n": None,
        "values": {name: _value(value) for name, value in values.items()},
        "wrap": None,
        **extra,
    }


def tr(message: str, /, **values: object) -> Text:
    """``message`` in the current language, its ``{name}`` placeholders filled from ``values``.

    Pass ``message`` as a string literal (not an f-string): ``nox -s translations`` finds
    it in the source. A value that is itself a :class:`Text` is translated with it.

    Raises
    ------
    KeyError
        If a placeholder of ``message`` has no value.
    """
    return _make(_record(message, values))


def tr_plural(singular: str, plural: str, n: int, /, **values: object) -> Text:
    """Like :func:`tr`, with the form for ``n`` (also available as ``{n}``) chosen by the
    language's plural rule (Russian has three forms, Chinese one)."""
    return _make(_record(singular, {"n": n, **values}, plural=plural, n=n))


def say(message: str | Text, /, **values: object) -> None:
    """Print a conclusion as a paragraph of its own, wrapped to 70 columns, in the current language.

    ``message`` is a literal (as for :func:`tr`) or a :class:`Text` already made, such as
    one from :func:`tr_plural`.
    """
    if isinstance(message, Text):
        if values:
            raise TypeError("say() takes no values with a Text: they are already filled in")
        record = {**message.record, "wrap": _PARAGRAPH_WIDTH}
    else:
        record = _record(message, values, wrap=_PARAGRAPH_WIDTH)
    if _recorded is not None and isinstance(message, Text) and _recorded[-1:] == [message.record]:
        _recorded.pop()  # the paragraph replaces the unwrapped text it was made from
    print(f"\n{_make(record)}\n")


def paragraph(text: Text, width: int = _PARAGRAPH_WIDTH) -> Text:
    """``text`` filled to ``width`` columns, in whichever language it is rendered.

    Made from a :class:`Text` (typically under :func:`parts`); the paragraph is recorded
    in its place.
    """
    if _recorded is not None and _recorded[-1:] == [text.record]:
        _recorded.pop()
    return _make({**text.record, "wrap": width})


@contextlib.contextmanager
def parts() -> Iterator[None]:
    """Messages made inside are parts of a larger one: they are not recorded on their own.

    The message made from them afterwards is recorded, with the parts as its values, so
    that a docs build replaces the whole text it printed, never a stray word of it.
    """
    global _recorded
    kept, _recorded = _recorded, None
    try:
        yield
    finally:
        _recorded = kept


def table(
    header: Sequence[str | Text],
    rows: Sequence[Sequence[object]],
    *,
    title: str | Text | None = None,
) -> Text:
    """A plain-text table whose columns are laid out again in each language.

    Parameters
    ----------
    header : sequence of str or Text
        Column titles, usually made with :func:`tr` (under :func:`parts`).
    rows : sequence of sequences
        Cells: strings (raw data, shown as they are), :class:`Text`, or any value shown
        with ``str()``.
    title : str or Text, optional
        A line above the table.

    Returns
    -------
    Text
        The first column is aligned left, the others right, two spaces apart, a line of
        dashes under the header; widths are counted in columns (a CJK character takes two).

    Raises
    ------
    ValueError
        If a row has not as many cells as the header.
    """
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a table row has {len(row)} cells, its header {len(header)}")
    record = {
        "table": {
            "title": _value(title) if title else None,
            "header": [_value(cell) for cell in header],
            "rows": [[_value(cell) for cell in row] for row in rows],
        }
    }
    if isinstance(title, Text) and _recorded is not None and _recorded[-1:] == [title.record]:
        _recorded.pop()  # made just for this table: the table's record holds it
    return _make(record)


def _render_table(table: Mapping[str, Any], code: str, strict: bool) -> str:
    def cell(value: object) -> str:
        return render(value, code, strict=strict) if isinstance(value, Mapping) else str(value)

    header = [cell(value) for value in table["header"]]
    rows = [[cell(value) for value in row] for row in table["rows"]]
    widths = [max(display_width(row[col]) for row in [header, *rows]) for col in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [cells[0] + " " * (widths[0] - display_width(cells[0]))]
        padded += [
            " " * (w - display_width(c)) + c for c, w in zip(cells[1:], widths[1:], strict=True)
        ]
        return "  ".join(padded).rstrip()

    lines = [line(header), "  ".join("-" * w for w in widths), *map(line, rows)]
    if table.get("title"):
        lines.insert(0, cell(table["title"]))
    return "\n".join(lines)


def start_recording() -> None:
    """Keep the record of every message made from now on (the docs build, per example)."""
    global _recorded
    _recorded = []


def stop_recording() -> list[dict[str, Any]]:
    """Stop recording; return the records in the order the messages were made."""
    global _recorded
    records, _recorded = _recorded or [], None
    return records


def _is_wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal or an output block: two per CJK character."""
    return sum(2 if _is_wide(char) else 1 for char in text)


# A string field's [[fill]align][width] in a format spec, e.g. "<28" or "*^10".
_STRING_SPEC = re.compile(r"(?:(?P<fill>.)?(?P<align>[<>^]))?(?P<width>\d+)")


class _ColumnFormatter(string.Formatter):
    """``str.format``, except that a string field's width counts columns, not characters,
    and a number is written in the language's convention (:mod:`compperf.numerals`).

    A table row laid out as ``"{tool:<28}{outcome:<18}"`` then stays aligned when a cell
    is Chinese, whose characters take two columns each.
    """

    def __init__(self, code: str = SOURCE_LANGUAGE) -> None:
        self.code = code

    def format_field(self, value: object, format_spec: str) -> str:
        match = _STRING_SPEC.fullmatch(format_spec) if isinstance(value, str) else None
        if match is None:
            return numerals.localize(super().format_field(value, format_spec), value, self.code)
        text = str(value)
        pad = max(int(match["width"]) - display_width(text), 0)
        fill, align = match["fill"] or " ", match["align"] or "<"
        left = {"<": 0, ">": pad, "^": pad // 2}[align]
        return fill * left + text + fill * (pad - left)


@cache
def _formatter(code: str) -> _ColumnFormatter:
    return _ColumnFormatter(code)


# A CJK line never starts with closing punctuation nor ends with opening punctuation.
_NO_LINE_START = set("，。、；：！？）」』》】〕,.;:!?)")
_SHORTEST_LAST_LINE = 8  # columns: four CJK characters
_NO_LINE_END = set("（「『《【〔(")


def wrap(text: str, width: int = _PARAGRAPH_WIDTH) -> str:
    """Break ``text`` into lines of at most ``width`` columns.

    Text without wide characters is filled by :func:`textwrap.fill`. Text with CJK
    characters (two columns each, no spaces between words) may break between any two of
    them, except before closing or after opening punctuation.
    """
    if not any(map(_is_wide, text)):
        return textwrap.fill(text, width)
    tokens: list[str] = []
    for chunk in text.split():
        word = ""
        for char in chunk:
            if _is_wide(char):
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
        size = 2 if _is_wide(token[0]) else len(token)
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
        if take >= len(above) or not _is_wide(above[-take]):
            break
        lines[-2], lines[-1] = above[:-take], above[-take:] + lines[-1]
    return "\n".join(lines)
