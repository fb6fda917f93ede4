"""Sentences and figure labels in the reader's language, recorded so that a docs build can show them in every language.

An example prints a conclusion with :func:`say` and labels a figure with :func:`tr`. Both
look the message up in the catalogs that ship with compperf (``compperf/locales``), in the
language chosen with :func:`use_language` (English unless a script chooses another), and
fill in its named placeholders. While recording is on (the docs build turns it on around
each example), every message is also kept with its values, so that the page can be shown
in another language later with the same numbers, without running the example again.

This module makes and renders messages (and formats their values, :class:`_ColumnFormatter`);
its seams live beside it and are re-exported here: :mod:`compperf.catalogs` (reading the
``.mo`` files), :mod:`compperf.recording` (what a docs build keeps),
:mod:`compperf.text_layout` (display width, wrapping, tables) and :mod:`compperf.fonts`
(the fonts figures are drawn with).

Why about 390 lines in one module: making a message (:func:`tr`, :func:`say`) and
rendering it again in another language (:func:`render`) read and write the same record,
and the formatter fills its placeholders in both; apart, each half would have to know
the other's record format.
"""

from __future__ import annotations

import gettext
import numbers
import re
import string
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from compperf import catalogs, numerals, recording, units
from compperf.catalogs import MissingTranslation
from compperf.fonts import FONT_WHEELS, FONTS, add_wheel_fonts, use_fonts, wheel_fonts
from compperf.recording import parts
from compperf.recording import start as start_recording
from compperf.recording import stop as stop_recording
from compperf.text_layout import LINE_WIDTH as _LINE_WIDTH
from compperf.text_layout import PARAGRAPH_WIDTH as _PARAGRAPH_WIDTH
from compperf.text_layout import display_width, fold_long_lines, lay_out_table, wrap

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

_language = SOURCE_LANGUAGE


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
        use_fonts(code)


def language() -> str:
    """The language that :func:`tr` and :func:`say` use now."""
    return _language


@cache
def _catalog(code: str) -> gettext.NullTranslations:
    """Every ``.mo`` file of a language, merged: the package's and each example's."""
    if code == SOURCE_LANGUAGE:
        return gettext.NullTranslations()
    return catalogs.load(LOCALES / code / "LC_MESSAGES")


def _lookup(record: Mapping[str, Any], code: str, strict: bool) -> str:
    if code == SOURCE_LANGUAGE:
        plural, n = record.get("plural"), record.get("n")
        return record["message"] if plural is None or n == 1 else plural
    return catalogs.translate(_catalog(code), record, code, strict)


def _render_table(table: Mapping[str, Any], code: str, strict: bool) -> str:
    def cell(value: object) -> str:
        if isinstance(value, Mapping):
            return _render(value, code, strict)
        return numerals.localize(str(value), value, code)  # a number in the reader's way

    title = cell(table["title"]) if table.get("title") else None
    header = [cell(value) for value in table["header"]]
    rows = [[cell(value) for value in row] for row in table["rows"]]
    # A column that holds one value in every row (the device, the threads) is said once,
    # above the table, instead of in each row.
    constant = [
        col
        for col in range(1, len(header))
        if len(rows) > 1 and header[col] and len({row[col] for row in rows}) == 1
    ]
    if constant:
        with parts():
            said = [
                _said(tr("{column}: {value}", column=header[col], value=rows[0][col]), code, strict)
                for col in constant
            ]
        title = "\n".join([*([title] if title else []), *said])
        keep = [col for col in range(len(header)) if col not in constant]
        header = [header[col] for col in keep]
        rows = [[row[col] for col in keep] for row in rows]
    return lay_out_table(title, header, rows)


def _said(text: Text, code: str, strict: bool) -> str:
    return _render(text.record, code, strict)


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
    laid out again for the widths of the cells in ``code``; a column with the same value
    in every row is said once, above the table.

    A message that is not a paragraph (``wrap`` None) keeps its lines, except that a line
    wider than 80 columns is folded (:func:`compperf.text_layout.fold_long_lines`).
    """
    text = _render(record, code, strict)
    if "table" in record or record.get("wrap"):
        return text
    return fold_long_lines(text, _LINE_WIDTH)


def _render(record: Mapping[str, Any], code: str, strict: bool) -> str:
    """:func:`render` without folding long lines: a message, or a part of a larger one."""
    if "table" in record:
        return _render_table(record["table"], code, strict)
    values = {
        name: _render(value, code, strict) if isinstance(value, Mapping) else value
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
    if isinstance(value, numbers.Integral):  # a NumPy integer, kept as a number
        return int(value)
    if isinstance(value, numbers.Real):  # a NumPy float
        return float(value)
    with parts():  # e.g. a Measurement, whose text is a message of its own
        text = str(value)
    return text.record if isinstance(text, Text) else text


def _make(record: dict[str, Any]) -> Text:
    text = Text(render(record, _language), record)
    recording.keep(record)
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
    Besides Python's format specs (``{share:.0%}``), three write a number with its unit,
    chosen to keep three significant figures and written in the reader's language:
    ``{t:time}`` for seconds (``"12.3 µs"``), ``{b:bytes}`` for bytes (``"1.5 MiB"``)
    and ``{f:flops}`` for floating-point operations per second (``"12.3 GFLOP/s"``).
    Pass the number itself: the message records it, and another language writes it again.

    Raises
    ------
    KeyError
        If a placeholder of ``message`` has no value.
    TypeError
        If a ``time``, ``bytes`` or ``flops`` value is not a real number.
    ValueError
        If such a value is NaN.

    Examples
    --------
    >>> print(tr("{n} calls in {t:time}, {b:bytes} each", n=3, t=0.0123, b=3 * 2**20))
    3 calls in 12.3 ms, 3 MiB each
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
    if isinstance(message, Text):  # the paragraph replaces the unwrapped text it was made from
        recording.forget_last(message.record)
    print(f"\n{_make(record)}\n")


def paragraph(text: Text, width: int = _PARAGRAPH_WIDTH) -> Text:
    """``text`` filled to ``width`` columns, in whichever language it is rendered.

    Made from a :class:`Text` (typically under :func:`parts`); the paragraph is recorded
    in its place.
    """
    recording.forget_last(text.record)
    return _make({**text.record, "wrap": width})


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
        Cells: strings (raw data, shown as they are), :class:`Text`, numbers (written
        with ``str()`` in the language's convention: round a float to the digits it
        should show), or any value shown with ``str()``.
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
    if isinstance(title, Text):  # made just for this table: the table's record holds it
        recording.forget_last(title.record)
    return _make(record)


# A string field's [[fill]align][width] in a format spec, e.g. "<28" or "*^10".
_STRING_SPEC = re.compile(r"(?:(?P<fill>.)?(?P<align>[<>^]))?(?P<width>\d+)")


class _ColumnFormatter(string.Formatter):
    """``str.format``, except that a string field's width counts columns, not characters,
    a number is written in the language's convention (:mod:`compperf.numerals`), and the
    format specs ``time``, ``bytes`` and ``flops`` write a number with its unit
    (:mod:`compperf.units`).

    A table row laid out as ``"{tool:<28}{outcome:<18}"`` then stays aligned when a cell
    is Chinese, whose characters take two columns each.
    """

    def __init__(self, code: str = SOURCE_LANGUAGE) -> None:
        self.code = code

    def format_field(self, value: object, format_spec: str) -> str:
        if format_spec in units.SPECS:
            return render(units.record(format_spec, value), self.code)
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
