"""Numbers, units and the ratio sign in the reader's convention, in every catalog.

What compperf formats from a placeholder follows the language by itself
(:mod:`compperf.numerals`); these checks cover what a translator types: a decimal written
into Russian prose, a time unit left in English, a ratio written with the letter x ("1.24x")
on a page whose other ratios carry the multiplication sign, as compperf prints them.
"""

from __future__ import annotations

import re
from pathlib import Path

import compperf_project
import pytest
from babel.messages.pofile import read_po
from compperf_docs.message_catalogs import COMMENT_CONTEXT

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "locales"
PACKAGE = ROOT / "src" / "compperf" / "locales"
CODES = compperf_project.load().codes


def _catalogs(folder: Path, code: str) -> list[Path]:
    return sorted(
        path for path in (folder / code / "LC_MESSAGES").rglob("*.po") if path.name != "sphinx.po"
    )


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _messages(path: Path, *, comments: bool = False) -> list[tuple[str, str]]:
    """(msgid, msgstr) of each translated message; a plural's forms one by one."""
    with path.open("rb") as handle:
        catalog = read_po(handle)
    found = []
    for message in catalog:
        if not message.id or not message.string:
            continue
        if message.context == COMMENT_CONTEXT and not comments:
            continue  # a code comment: its numbers are code
        ids = [message.id] if isinstance(message.id, str) else list(message.id)
        strings = [message.string] if isinstance(message.string, str) else list(message.string)
        found += [(ids[0], string) for string in strings if string]
    return found


# What a translation keeps as written: literals, roles, placeholders, URLs, file names.
_KEPT = re.compile(r"``.+?``|`[^`]+`|\{[^{}]*\}|https?://\S+|\b[\w-]+\.(?:py|json|pt2?|md)\b")
# A decimal written with a point: "1.5", not "2.13.0" nor "plot_1.py".
_POINT_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
# Where a point is no decimal: versions and section numbers.
_NOT_A_DECIMAL = re.compile(
    r"(?:Python|PyTorch|torch|CUDA|sphinx\S*|версии|версия|раздел\w*|глав\w*|section)\s*$",
    re.IGNORECASE,
)


def _point_decimals(text: str) -> list[str]:
    prose = _KEPT.sub(" ", text)
    return [
        match[0]
        for match in _POINT_DECIMAL.finditer(prose)
        if not _NOT_A_DECIMAL.search(prose[: match.start()])
    ]


RU_CATALOGS = _catalogs(PAGES, "ru") + _catalogs(PACKAGE, "ru")


@pytest.mark.parametrize("path", RU_CATALOGS, ids=_name)
def test_russian_prose_writes_a_decimal_comma(path: Path) -> None:
    """«в 1,5 раза», not «в 1.5 раза» (code, literals and versions keep their point)."""
    problems = [
        f"{_name(path)}: {msgid[:50]!r}: {decimal} (write {decimal.replace('.', ',')})"
        for msgid, msgstr in _messages(path)
        for decimal in _point_decimals(msgstr)
    ]
    assert not problems, "\n".join(problems)


# Time units as the source writes them, and how each language writes them.
_TIME_UNITS = re.compile(r"(?<![\w/.-])(µs|us|ms|ns|sec|s)(?![\w/])")
LOCAL_TIME_UNITS = {"ru": ("с", "мс", "мкс", "нс"), "zh_CN": ("秒", "毫秒", "微秒", "纳秒")}
PRINTED = {code: _catalogs(PACKAGE, code) for code in CODES[1:]}


@pytest.mark.parametrize("path", [path for code in CODES[1:] for path in PRINTED[code]], ids=_name)
def test_printed_time_units_are_the_readers(path: Path) -> None:
    """What a page prints or draws (tables included) names its time units in the reader's
    language: «мкс», 微秒, not "µs"."""
    code = next(code for code in CODES[1:] if path in PRINTED[code])
    problems = [
        f"{_name(path)}: {msgid[:50]!r}: {match[1]!r} (write one of {LOCAL_TIME_UNITS[code]})"
        for msgid, msgstr in _messages(path)
        for match in _TIME_UNITS.finditer(_KEPT.sub(" ", msgstr))
        if code in LOCAL_TIME_UNITS
    ]
    assert not problems, "\n".join(problems)


# A ratio with the letter x ("1.24x"); compperf's Ratio and compare() write the
# multiplication sign.
_LETTER_X = re.compile(r"(?:\}|\d)x(?![\w])")


EXAMPLE_CATALOGS = [
    path for code in CODES[1:] for path in PRINTED[code] if path.parent.name != "LC_MESSAGES"
]


def _letter_x(text: str) -> bool:
    return _LETTER_X.search(_KEPT.sub(lambda m: m[0] if m[0][0] == "{" else " ", text)) is not None


# Every catalog of every translated language: page prose (docs/locales), what examples
# print and draw and their code comments (src/compperf/locales), compperf's own messages.
ALL_CATALOGS = [path for code in CODES[1:] for path in _catalogs(PAGES, code) + PRINTED[code]]


@pytest.mark.parametrize("path", ALL_CATALOGS, ids=_name)
def test_a_translated_page_writes_ratios_with_one_sign(path: Path) -> None:
    """compperf prints a ratio with the multiplication sign (Ratio, compare()); so does a
    translation, in prose, printed text and code comments alike; and so does the English
    text the catalog translates."""
    problems = [
        f"{_name(path)}: {text[:70]!r} writes a ratio with the letter x (use ×)"
        for msgid, msgstr in _messages(path, comments=True)
        for text in (msgid, msgstr)
        if _letter_x(text)
    ]
    assert not problems, "\n".join(sorted(set(problems)))


# The English sources: the examples (prose, messages, comments), the pages and compperf's
# docstrings, which the API page shows.
ENGLISH_SOURCES = sorted(
    [
        *(ROOT / "examples").rglob("*.py"),
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
        *(ROOT / "src" / "compperf").glob("*.py"),
    ]
)
# A ratio with the letter x in source text; not hex (0x1f) nor shapes (64x64).
_SOURCE_LETTER_X = re.compile(r"(?<![\w.])\d+(?:\.\d+)?x(?![\w])")


@pytest.mark.parametrize("path", ENGLISH_SOURCES, ids=_name)
def test_english_sources_write_ratios_with_one_sign(path: Path) -> None:
    """Every English text a reader sees writes a ratio with the multiplication sign, as
    the printed ratios do."""
    problems = [
        f"{_name(path)}:{number}: {line.strip()[:70]!r} writes a ratio with the letter x"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _SOURCE_LETTER_X.search(line)
    ]
    assert not problems, "\n".join(problems)


def _source(path: Path) -> str:
    """The example whose messages a catalog holds: examples/<chapter>/<page>.py."""
    parts = path.with_suffix(".py").parts
    return "/".join(parts[parts.index("examples") :])


@pytest.mark.parametrize(
    "path", [path for path in EXAMPLE_CATALOGS if CODES[1] in path.parts], ids=_source
)
def test_an_english_page_writes_ratios_with_one_sign(path: Path) -> None:
    """The English messages of a page (its example's literals), read from one catalog."""
    problems = [
        f"{_source(path)}: {msgid[:70]!r} writes a ratio with the letter x (use ×)"
        for msgid, _ in _messages(path)
        if _letter_x(msgid)
    ]
    assert not problems, "\n".join(sorted(set(problems)))
